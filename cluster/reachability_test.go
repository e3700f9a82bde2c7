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
func reachTiming(blockFor time.Duration) func(*cluster.Config) {
	return func(c *cluster.Config) {
		fastTiming(c)
		c.Reachability = cluster.ReachabilityConfig{After: 200 * time.Millisecond, BlockFor: blockFor}
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
// blocked by the vote of the two that cannot reach it, and its share of
// the identities moves to them: every request succeeds, none on it.
// Without the vote its identities time out for as long as it stays
// listed. It blocks nobody itself: its own report is one vote of three.
func TestReachabilityBlocksAMemberTheOthersCannotReach(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, reachTiming(time.Minute), counterKind())
	b := startMemberWith(t, reg, reachTiming(time.Minute), counterKind())
	unreachable := make(chan *cluster.MemberUnreachable, 8)
	for _, n := range []node{a, b} {
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.MemberUnreachable) { unreachable <- ev })
	}
	x := startStranger(t, reg, reachTiming(time.Minute))
	awaitMembers(t, 3, a, b)

	select {
	case ev := <-unreachable:
		require.Equal(t, x.sys.Address(), ev.Address)
		require.Equal(t, 2, ev.Votes)
		require.Equal(t, 3, ev.Members)
		require.Equal(t, time.Minute, ev.BlockFor)
	case <-time.After(wait):
		t.Fatal("the member nobody reaches was never voted unreachable")
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
	require.True(t, remote.Get(a.sys).BlockList().IsBlocked(x.sys.Address()))
	require.True(t, remote.Get(b.sys).BlockList().IsBlocked(x.sys.Address()))
	require.Empty(t, remote.Get(x.sys).BlockList().Blocked(), "one vote of three blocks nobody")
}

// A block the vote made ends after BlockFor on every member that applied
// it, and a member still unreachable is voted out again once its link has
// been down for After since.
func TestReachabilityBlockEndsAfterBlockFor(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, reachTiming(300*time.Millisecond), counterKind())
	b := startMemberWith(t, reg, reachTiming(300*time.Millisecond), counterKind())
	type change struct {
		on      string
		blocked bool
	}
	changes := make(chan change, 64)
	for _, n := range []node{a, b} {
		on := n.sys.Address()
		actor.Subscribe(n.sys.EventStream(), func(ev *remote.BlockEvent) { changes <- change{on, ev.Blocked} })
	}
	x := startStranger(t, reg, reachTiming(300*time.Millisecond))
	awaitMembers(t, 3, a, b)
	_ = x

	// Each of a and b: blocked, unblocked, blocked again.
	seen := map[string][]bool{}
	deadline := time.After(wait)
	for len(seen[a.sys.Address()]) < 3 || len(seen[b.sys.Address()]) < 3 {
		select {
		case c := <-changes:
			if s := seen[c.on]; len(s) < 3 {
				seen[c.on] = append(s, c.blocked)
			}
		case <-deadline:
			t.Fatalf("block changes seen: %v", seen)
		}
	}
	require.Equal(t, []bool{true, false, true}, seen[a.sys.Address()])
	require.Equal(t, []bool{true, false, true}, seen[b.sys.Address()])
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

// When a vote's block ends, the member is on probation: remote lets its
// link up, but it owns nothing until the link comes up. A member still
// unreachable is blocked again without having been an owner in between,
// so the grains that took over its share keep running. Unblocked
// outright, it was an owner again at once and its share was handed back
// to it (stopped here) at every BlockFor, to fail until the next vote.
func TestReachabilityProbationHandsNothingBack(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming(300 * time.Millisecond)
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	changes := blockChanges(a)
	x := startStranger(t, reg, tune)
	awaitMembers(t, 3, a, b)
	waitBlock := func(want bool) {
		t.Helper()
		deadline := time.After(wait)
		for {
			select {
			case c := <-changes:
				if c[1] == want {
					return
				}
			case <-deadline:
				t.Fatalf("a's block of x never became %v", want)
			}
		}
	}
	waitBlock(true)
	ctx := ctxWait(t)
	var ids []cluster.Identity
	for i := range 40 {
		id := cluster.NewIdentity("counter", string(rune('a'+i%26))+string(rune('a'+i/26)))
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.NotEqual(t, x.sys.Address(), who.Member)
		ids = append(ids, id)
	}
	terminated := make(chan *cluster.ActivationTerminated, 256)
	for _, n := range []node{a, b} {
		self := n.c.Self().Key()
		actor.Subscribe(n.sys.EventStream(), func(ev *cluster.ActivationTerminated) {
			if ev.Member == self {
				terminated <- ev
			}
		})
	}
	waitBlock(false) // the block ended: probation
	waitBlock(true)  // still unreachable: blocked again
	for _, id := range ids {
		_, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
	}
	select {
	case ev := <-terminated:
		t.Fatalf("%s was handed back to the member on probation (stopped on %s)", ev.Identity, ev.Member)
	default:
	}
}

// A member on probation whose link comes up is an owner again: here the
// stranger is replaced, at the same address, by a member of the right
// system, which the probation's probe reaches; identities are activated
// on it again.
func TestReachabilityProbationReadmitsAReachableMember(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming(300 * time.Millisecond)
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	changes := blockChanges(a)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	deadline := time.After(wait)
	for blocked := false; !blocked; {
		select {
		case c := <-changes:
			blocked = c[1] == true
		case <-deadline:
			t.Fatal("x was never blocked")
		}
	}
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	fixed := startStrangerAt(t, reg, tune, addr, "shop")
	require.Equal(t, addr, fixed.sys.Address())

	// Readmitted once a probe connects: some identity lands on it.
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
