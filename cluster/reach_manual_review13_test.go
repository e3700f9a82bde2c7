package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// review13 (F3, F4, rewritten for suspensions): a block by hand is the
// operator's and the vote never touches it; an unblock by hand lifts the
// hand's block only, and leaves a suspension to the vote, which lifts it
// once the member is reachable. Here x, suspended by a and b, is blocked
// by hand on a and b; fixed (replaced at its
// address by a member of the right system), it stays blocked and
// suspended on both; unblocked by hand on both, their probes reach it and
// both lift it.
func TestReview13HandBlockDuringProbationIsNotLifted(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	addr := freeAddress(t)
	events := reachEvents(addr, a, b)
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	awaitReach(t, events, a.sys.Address(), true)
	awaitReach(t, events, b.sys.Address(), true)

	// The operator blocks it on both (a block by hand reaches the others
	// only when the member is in the blocking member's view at that
	// moment, and x, evicted by the vote, rejoins in a loop).
	for _, n := range []node{a, b} {
		remote.Get(n.sys).BlockList().Block(addr)
	}
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	fixed := startStrangerAt(t, reg, tune, addr, "shop")
	require.Equal(t, addr, fixed.sys.Address())
	awaitMembers(t, 3, fixed)
	for _, n := range []node{a, b} {
		require.True(t, remote.Get(n.sys).BlockList().IsBlocked(addr), "the vote lifted the hand's block")
		require.True(t, cluster.Review13Suspended(n.c, addr), "lifted while blocked by hand")
	}

	for _, n := range []node{a, b} { // the operator again
		remote.Get(n.sys).BlockList().Unblock(addr)
	}
	awaitReach(t, events, a.sys.Address(), false)
	awaitReach(t, events, b.sys.Address(), false)
}
