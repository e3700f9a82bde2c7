package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// The in-memory registry's first Join ever founded the cluster, and its
// membership says so (Founded): the founder's placement actor may read a
// later view first (the view stream keeps the latest), and without it took
// itself for a member that joined an existing cluster, waited W and
// vouched for nobody, so every member waited W before its first
// activation. Later joins, and joins after everyone left, did not found it.
func TestMemoryFounderFoundedItsCluster(t *testing.T) {
	clock, reg := manualRegistry(t)
	ctx := context.Background()
	founder, err := reg.Join(ctx, cluster.Member{ID: "a", Incarnation: 1, Address: "a:1"})
	require.NoError(t, err)
	second, err := reg.Join(ctx, cluster.Member{ID: "b", Incarnation: 1, Address: "b:1"})
	require.NoError(t, err)

	type founded interface{ Founded() (time.Time, bool) }
	at, ok := founder.(founded).Founded()
	require.True(t, ok, "the first Join founded the cluster")
	require.Equal(t, clock.Now(), at)
	_, ok = second.(founded).Founded()
	require.False(t, ok)
	// The founder's stream holds the latest view only: epoch 2.
	require.Equal(t, uint64(2), (<-founder.Snapshots()).Epoch)

	require.NoError(t, founder.Leave(ctx))
	require.NoError(t, second.Leave(ctx))
	again, err := reg.Join(ctx, cluster.Member{ID: "c", Incarnation: 1, Address: "c:1"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = again.Stop(ctx) })
	_, ok = again.(founded).Founded()
	require.False(t, ok, "a registry that had members before is not founded again")
}
