package consul

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestBackoffGrowsWithJitterAndCap(t *testing.T) {
	base, maxWait := 100*time.Millisecond, 2*time.Second
	for _, tc := range []struct {
		attempt  int
		min, max time.Duration
	}{
		{1, 50 * time.Millisecond, 100 * time.Millisecond},
		{2, 100 * time.Millisecond, 200 * time.Millisecond},
		{4, 400 * time.Millisecond, 800 * time.Millisecond},
		{5, 800 * time.Millisecond, 1600 * time.Millisecond},
		{60, time.Second, maxWait},
	} {
		seen := map[time.Duration]bool{}
		for range 200 {
			d := backoff(tc.attempt, base, maxWait)
			assert.GreaterOrEqual(t, d, tc.min, "attempt %d", tc.attempt)
			assert.LessOrEqual(t, d, tc.max, "attempt %d", tc.attempt)
			seen[d] = true
		}
		assert.Greater(t, len(seen), 1, "attempt %d: no jitter", tc.attempt)
	}
}

func TestWaitCtx(t *testing.T) {
	assert.True(t, waitCtx(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, waitCtx(ctx, time.Hour))
}

func TestEpochTracker(t *testing.T) {
	var e epochTracker
	var got []uint64
	regressions := 0
	for _, idx := range []uint64{10, 10, 15, 3, 3, 8, 20, 2} {
		epoch, regressed, from := e.observe(idx)
		if regressed {
			regressions++
			assert.Greater(t, from, idx)
		}
		got = append(got, epoch)
	}
	assert.Equal(t, []uint64{10, 10, 15, 16, 16, 21, 33, 34}, got)
	assert.Equal(t, 2, regressions)
}
