package cluster_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// review15Evicts is the registry of the member under test, recording
// every member it is asked to evict (by key) before evicting it.
type review15Evicts struct {
	*cluster.MemoryRegistry
	keys chan string
}

func (r review15Evicts) Evict(ctx context.Context, m cluster.Member) error {
	r.keys <- m.Key()
	return r.MemoryRegistry.Evict(ctx, m)
}

// review15 F2: a member that rejoins evicts every member at an address it
// still suspends (evictBlocked: its first view marks them blocked through
// remoteBlocked, which now names suspended addresses too), though the vote
// of the cluster no longer holds against it. Here x refuses a and b; both
// suspend it (its incarnation is evicted). x then lets b in: b lifts x's
// new incarnation, which a alone cannot reach (1 vote of 3: not voted
// out, and a keeps its own suspension while its link stays down, as
// designed). a is evicted and rejoins: on branch reach, its first view
// evicts x, a member the majority reaches and that no vote found
// unreachable: x fences, every grain on it stops and moves, and so again
// at each rejoin of a. Only the vote evicts a suspended member; the
// rejoin's eviction is for members remote's block list names.
func TestReview15RejoinDoesNotEvictAMemberOnlyThisOneSuspends(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	rec := review15Evicts{MemoryRegistry: reg, keys: make(chan string, 256)}
	a := startMemberWith(t, rec, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	g := &review14Gate{}
	g.set(a.sys.Address(), b.sys.Address())
	x := startReview14Gated(t, reg, tune, g)
	xaddr := x.sys.Address()
	events := reachEvents(xaddr, a, b)
	awaitReach(t, events, a.sys.Address(), true)
	awaitReach(t, events, b.sys.Address(), true)

	g.set(a.sys.Address()) // b reaches x again, a does not
	awaitReach(t, events, b.sys.Address(), false)
	require.True(t, cluster.Review14Suspended(a.c, xaddr))
	xKey := x.c.Self().Key()
	require.False(t, cluster.Review14Blocked(b.c, xKey), "b lifted an earlier incarnation")

	oldA := a.c.Self()
	ready := make(chan struct{}, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ClusterStatusChanged) {
		if ev.To == cluster.StatusReady && ev.Member != oldA.Key() {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})
	ctx := ctxWait(t)
	require.NoError(t, reg.Evict(ctx, oldA))
	awaitSignal(t, ready, "a never rejoined")
	// a's first view after the rejoin is installed (Ready comes after
	// evictBlocked); Shutdown waits for the evictions it started.
	require.NoError(t, a.c.Shutdown(ctx))
	close(rec.keys)
	for k := range rec.keys {
		require.NotEqual(t, xKey, k, "a's rejoin evicted x, which the vote never found unreachable")
	}
}
