package cluster_test

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// reachTiming turns the reachability vote on over fastTiming.
func reachTiming() func(*cluster.Config) {
	return func(c *cluster.Config) {
		fastTiming(c)
		c.Reachability = cluster.ReachabilityConfig{After: 200 * time.Millisecond}
	}
}

// startStranger starts a member of registry reg whose remote SystemName
// is another one: the provider lists it beside the others, but every
// handshake between it and them is refused (ErrClusterMismatch), as for
// a member whose certificate the others refuse.
func startStranger(t *testing.T, reg cluster.Provider, tune func(*cluster.Config)) node {
	t.Helper()
	return startStrangerAt(t, reg, tune, "127.0.0.1:0", "elsewhere")
}

// startStrangerAt starts a member listening on listen whose remote
// SystemName (and cluster Name) is name.
func startStrangerAt(t *testing.T, reg cluster.Provider, tune func(*cluster.Config), listen, name string) node {
	t.Helper()
	return startMemberFull(t, reg, func(*cluster.Config) {}, func(c *actor.SystemConfig) {
		ccfg := cluster.Config{Name: name, Provider: reg, Kinds: []cluster.Kind{counterKind()}}
		tune(&ccfg)
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress = listen
		rcfg.SystemName = name
		rcfg.Serializers = serializers(t)
		rcfg.ReconnectBackoffMin = 5 * time.Millisecond
		rcfg.ReconnectBackoffMax = 50 * time.Millisecond
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
}

// A member the provider lists but the others cannot connect to is
// suspended by the vote of the two that cannot reach it, and its share of
// the identities moves to them: every request succeeds, none on it.
// Without the vote its identities fail for as long as it stays listed. It
// suspends nobody itself: its own report is one vote of three.
func TestReachabilitySuspendsAMemberTheOthersCannotReach(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, reachTiming(), counterKind())
	b := startMemberWith(t, reg, reachTiming(), counterKind())
	unreachable := make(chan *cluster.MemberUnreachable, 8)
	for _, n := range []node{a, b} {
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberUnreachable) { unreachable <- ev })
	}
	x := startStranger(t, reg, reachTiming())
	awaitMembers(t, 3, a, b)

	for range 2 { // on a and on b
		select {
		case ev := <-unreachable:
			require.Equal(t, x.sys.Address(), ev.Address)
			require.Equal(t, 2, ev.Votes)
			require.Equal(t, 3, ev.Members)
		case <-time.After(wait):
			t.Fatal("the member nobody reaches was never voted unreachable on both")
		}
	}
	ctx := ctxWait(t)
	for i := range 40 {
		id := cluster.NewIdentity("counter", string(rune('a'+i%26))+string(rune('a'+i/26)))
		for _, from := range []node{a, b} {
			who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
			require.NoError(t, err, "%s from %s", id, from.sys.Address())
			require.NotEqual(t, x.sys.Address(), who.Member)
		}
	}
	require.True(t, cluster.Review13Suspended(a.c, x.sys.Address()))
	require.True(t, cluster.Review13Suspended(b.c, x.sys.Address()))
	require.Empty(t, remote.Get(a.sys).BlockList().Blocked(), "the vote does not touch remote's block list")
	require.False(t, cluster.Review13Suspended(x.c, a.sys.Address()), "one vote of three suspends nobody")
	require.False(t, cluster.Review13Suspended(x.c, b.sys.Address()), "one vote of three suspends nobody")
}

// A member still unreachable stays out: each new incarnation it rejoins
// as after its eviction is judged and evicted in turn, and it owns
// nothing meanwhile, so the grains that took over its share keep running
// (a block that ended by timer made it an owner again at each end: its
// share was handed back to it, stopped here, and failed until the next
// vote).
func TestReachabilityKeepsAnUnreachableMemberOutWithoutHandingBack(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, reachTiming(), counterKind())
	b := startMemberWith(t, reg, reachTiming(), counterKind())
	suspended := make(chan *cluster.MemberUnreachable, 8)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberUnreachable) { suspended <- ev })
	x := startStranger(t, reg, reachTiming())
	awaitMembers(t, 3, a, b)
	select {
	case <-suspended:
	case <-time.After(wait):
		t.Fatal("x was never suspended")
	}
	ctx := ctxWait(t)
	var ids []cluster.Identity
	for i := range 40 {
		id := cluster.NewIdentity("counter", string(rune('a'+i%26))+string(rune('a'+i/26)))
		_, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		ids = append(ids, id)
	}
	terminated := make(chan *cluster.ActivationTerminated, 256)
	incarnations := make(chan string, 64)
	for _, n := range []node{a, b} {
		self := n.c.Self().Key()
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.ActivationTerminated) {
			if ev.Member == self {
				terminated <- ev
			}
		})
	}
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		for _, m := range ev.Members {
			if m.Address == x.sys.Address() {
				incarnations <- m.Key()
			}
		}
	})
	// Three more incarnations of x come and are evicted (each rejoin
	// after an eviction is a new key in a's views).
	seen := map[string]bool{}
	deadline := time.After(wait)
	for len(seen) < 3 {
		select {
		case k := <-incarnations:
			seen[k] = true
		case <-deadline:
			t.Fatalf("x's incarnations seen: %v", seen)
		}
	}
	for _, id := range ids {
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.NotEqual(t, x.sys.Address(), who.Member)
	}
	select {
	case ev := <-terminated:
		t.Fatalf("%s was handed back to the unreachable member (stopped on %s)", ev.Identity, ev.Member)
	default:
	}
	require.True(t, cluster.Review13Suspended(a.c, x.sys.Address()))
}

// A suspended member whose link comes up is an owner again: here the
// stranger is replaced, at the same address, by a member of the right
// system, which the probes reach; MemberReachable is published and
// identities are activated on it again.
func TestReachabilityReadmitsAReachableMember(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	events := make(chan any, 16)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberUnreachable) { events <- ev })
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberReachable) { events <- ev })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	next := func() any {
		t.Helper()
		select {
		case ev := <-events:
			return ev
		case <-time.After(wait):
			t.Fatal("no reachability event")
			return nil
		}
	}
	require.IsType(t, &cluster.MemberUnreachable{}, next())
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	fixed := startStrangerAt(t, reg, tune, addr, "shop")
	require.Equal(t, addr, fixed.sys.Address())
	ev := next()
	require.IsType(t, &cluster.MemberReachable{}, ev)
	require.Equal(t, addr, ev.(*cluster.MemberReachable).Address)

	ctx := ctxWait(t)
	for i := 0; ; i++ {
		require.Less(t, i, 100000, "no identity ever landed on the readmitted member")
		id := cluster.NewIdentity("counter", string(rune('a'+i%26))+string(rune('a'+(i/26)%26))+string(rune('a'+i/676)))
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		if who.Member == addr {
			break
		}
	}
}

// blockChanges records remote's block list changes on each node, in order.
func blockChanges(nodes ...node) <-chan [2]any {
	ch := make(chan [2]any, 256)
	for _, n := range nodes {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(ev *remote.BlockEvent) { ch <- [2]any{on, ev.Blocked} })
	}
	return ch
}
