package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// review14NoEvict is a provider without the optional Evictor (a
// provider may not support eviction): a suspended member stays listed.
type review14NoEvict struct{ cluster.Provider }

// A suspended member's process crashes (its registration stays until the
// lease expires) and is restarted at the same address, with the same
// MemberID (the default: the address) and so a later incarnation: for a
// while the view holds both, the dead one first. When the links to the
// address come up, vote lifts the first member at the address, the dead
// incarnation, and forgets the suspension: the live one stays out of
// owner selection (blocked at install for the suspended address) for as
// long as it lives, with nothing left to lift it, and no acknowledgement
// goes to it, though every member reaches it.
func TestReview14LiftReadmitsTheLiveIncarnationAtTheAddress(t *testing.T) {
	mem, err := cluster.NewMemoryRegistry(cluster.MemoryConfig{LeaseTTL: 3 * time.Second,
		RenewInterval: 100 * time.Millisecond, FencePeriod: 400 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(mem.Close)
	reg := review14NoEvict{mem}
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	unreachable := make(chan string, 16)
	for _, n := range []node{a, b} {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(*cluster.MemberUnreachable) { unreachable <- on })
	}
	g := &review14Gate{}
	g.set(a.sys.Address(), b.sys.Address())
	x := startReview14Gated(t, reg, tune, g)
	awaitMembers(t, 3, a, b)
	for range 2 {
		select {
		case <-unreachable:
		case <-time.After(wait):
			t.Fatal("x was never suspended on a and b")
		}
	}
	addr, old := x.sys.Address(), x.c.Self().Key()

	// x crashes: its registration stays until its lease expires.
	mem.Partition(old)
	_ = x.sys.Shutdown(ctxWait(t))
	joined := make(chan string, 16)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		for _, m := range ev.Joined {
			if m.Address == addr {
				joined <- m.Key()
			}
		}
	})
	reachable := make(chan *cluster.MemberReachable, 16)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberReachable) { reachable <- ev })
	y := startReview14GatedAt(t, reg, tune, g, addr) // restarted, links still refused
	require.Equal(t, addr, y.sys.Address())
	live := y.c.Self().Key()
	select {
	case k := <-joined:
		require.Equal(t, live, k)
	case <-time.After(wait):
		t.Fatal("the restarted member never came in a's view")
	}
	require.True(t, cluster.Review14Blocked(a.c, live), "a new incarnation at a suspended address is out until the vote lifts it")

	g.set() // fixed: every member reaches it
	select {
	case ev := <-reachable:
		require.Equal(t, live, ev.Member, "the dead incarnation %s was lifted, not the live one", old)
	case <-time.After(wait):
		t.Fatal("the restarted, reachable member was never lifted on a")
	}
	require.False(t, cluster.Review14Blocked(a.c, live), "the live incarnation is an owner again on a")
}
