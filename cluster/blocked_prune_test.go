package cluster_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// The caller side's set of blocked member keys keeps only members of the
// view. A blocked member that is evicted rejoins as a new incarnation (a
// new key) at the address remote still refuses; each incarnation is left
// out of owner selection when a view brings it, and before, its key stayed
// in the set after it left: one more key per rejoin, for the member's life.
// Here a member that never runs (a registration at an address nothing
// listens on) joins, is blocked, evicted and joins again, 20 times.
func TestClusterBlockedKeysPrunedWhenMembersLeave(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	const addr = "127.0.0.1:1"
	views := make(chan *cluster.TopologyChanged, 64)
	sub := actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) { views <- ev })
	t.Cleanup(func() { a.sys.EventStream().Unsubscribe(sub) })
	// awaitView waits for a view of a in which the member with key is
	// present (or absent).
	awaitView := func(key string, present bool) {
		t.Helper()
		for {
			select {
			case ev := <-views:
				found := false
				for _, m := range ev.Members {
					found = found || m.Key() == key
				}
				if found == present {
					return
				}
			case <-ctx.Done():
				t.Fatalf("no view with %s present=%v", key, present)
			}
		}
	}
	const rejoins = 20
	for i := range rejoins {
		ghost := cluster.Member{ID: "ghost", Incarnation: uint64(i + 1), Address: addr, Kinds: []string{"counter"}}
		m, err := reg.Join(ctx, ghost)
		require.NoError(t, err)
		awaitView(ghost.Key(), true)
		// Out of owner selection while it is in the view: from its
		// second incarnation on, because remote still blocks its address.
		require.Equal(t, min(i, 1), cluster.BlockedKeyCount(a.c), "incarnation %d in the view", i+1)
		if i == 0 {
			// The block takes it out of owner selection and evicts it.
			remote.Get(a.sys).BlockList().Block(addr)
		} else {
			// remote still refuses the address: the view marks it.
			require.NoError(t, reg.Evict(ctx, ghost))
		}
		awaitView(ghost.Key(), false)
		_ = m.Stop(ctx)
		require.LessOrEqual(t, cluster.BlockedKeyCount(a.c), 1, "after %d incarnations", i+1)
	}
	require.Zero(t, cluster.BlockedKeyCount(a.c), fmt.Sprintf("keys of %d incarnations that left", rejoins))
}
