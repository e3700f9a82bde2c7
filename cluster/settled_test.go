package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// TestClusterSettled: a member's view settles once every member of it has
// acknowledged it (and a joiner was vouched for): Settled holds; a third
// member's join settles the view anew on each, and ViewSettled is
// published for its epoch; Shutdown ends it.
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
	// awaitSettled waits until each node's view has n members and has
	// settled, and for the ViewSettled of its epoch on those of published
	// (subscribed before that view: a member's first views may settle
	// before start subscribes).
	awaitSettled := func(n int, published []node, nodes ...node) {
		t.Helper()
		awaitMembers(t, n, nodes...)
		for _, nd := range nodes {
			awaitTrue(t, ctx, nd, func() bool {
				topo, _ := nd.c.Topology()
				return nd.c.Settled() && len(topo.Members) == n
			}, "the view settles")
		}
		for _, nd := range published {
			topo, _ := nd.c.Topology()
			for seen := false; !seen; {
				select {
				case ev := <-events[nd.sys.Address()]:
					seen = ev.Epoch == topo.Epoch
				case <-ctx.Done():
					t.Fatalf("%s: no ViewSettled for epoch %d", nd.sys.Address(), topo.Epoch)
				}
			}
		}
	}
	a, b := start(), start()
	awaitSettled(2, nil, a, b)
	c := start()
	awaitSettled(3, []node{a, b}, a, b, c)

	require.NoError(t, c.c.Shutdown(ctx))
	require.False(t, c.c.Settled(), "a member that left has no settled view")
	var none *cluster.Cluster
	require.False(t, none.Settled())
}
