package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// TestClusterSettled: a member's view settles once every member of it has
// acknowledged it (and a joiner was vouched for): Settled holds and
// ViewSettled is published for that epoch; a third member's join settles
// the view anew on each; Shutdown ends it.
func TestClusterSettled(t *testing.T) {
	reg := fastRegistry(t)
	ctx := ctxWait(t)
	events := map[string]chan *cluster.ViewSettled{}
	start := func() node {
		n := startMemberWith(t, reg, fastTiming, counterKind())
		ch := make(chan *cluster.ViewSettled, 64)
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.ViewSettled) { ch <- ev })
		events[n.sys.Address()] = ch
		return n
	}
	// awaitSettled waits for each node's ViewSettled of the epoch of its
	// view of n members, and then checks Settled.
	awaitSettled := func(n int, nodes ...node) {
		t.Helper()
		awaitMembers(t, n, nodes...)
		for _, nd := range nodes {
			for {
				topo, _ := nd.c.Topology()
				var ev *cluster.ViewSettled
				select {
				case ev = <-events[nd.sys.Address()]:
				case <-ctx.Done():
					t.Fatalf("%s: the view of %d members did not settle", nd.sys.Address(), n)
				}
				if ev.Epoch == topo.Epoch && len(topo.Members) == n {
					break
				}
			}
			require.True(t, nd.c.Settled(), nd.sys.Address())
		}
	}
	a, b := start(), start()
	awaitSettled(2, a, b)
	c := start()
	awaitSettled(3, a, b, c)

	require.NoError(t, c.c.Shutdown(ctx))
	require.False(t, c.c.Settled(), "a member that left has no settled view")
	var none *cluster.Cluster
	require.False(t, none.Settled())
}
