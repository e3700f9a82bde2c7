package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// TestMemoryRegistryReleasedRetention: a released marker older than
// ReleasedRetention is dropped when the next one is recorded, so a
// long-running registry with members coming and going keeps a bounded
// set (each view carries them all). Before, every leave and every fenced
// incarnation's release added one for good.
func TestMemoryRegistryReleasedRetention(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(1_000, 0))
	reg, err := NewMemoryRegistry(MemoryConfig{LeaseTTL: memTTL, RenewInterval: memRenew, FencePeriod: memFence,
		Clock: clock, ReleasedRetention: time.Minute})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	obs := join(t, reg, member("obs", 1))
	require.NoError(t, join(t, reg, member("a", 1)).Leave(context.Background()))
	assert.Equal(t, []Member{member("a", 1)}, obs.Released())

	clock.Advance(30 * time.Second) // within the retention: both kept
	require.NoError(t, join(t, reg, member("b", 1)).Leave(context.Background()))
	assert.ElementsMatch(t, []Member{member("a", 1), member("b", 1)}, obs.Released())

	clock.Advance(45 * time.Second) // a's is 75 s old, b's 45 s
	require.NoError(t, join(t, reg, member("c", 1)).Leave(context.Background()))
	assert.ElementsMatch(t, []Member{member("b", 1), member("c", 1)}, obs.Released())

	// A key released once cannot join again, pruned or not.
	_, err = reg.Join(context.Background(), member("a", 1))
	require.ErrorIs(t, err, ErrIncarnationReused)
}
