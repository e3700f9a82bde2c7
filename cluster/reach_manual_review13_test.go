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
// by hand on a; fixed (replaced at its address by a member of the right
// system), b lifts it while a keeps it blocked and suspended; unblocked by
// hand on a, a's probe reaches it and a lifts it too.
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

	remote.Get(a.sys).BlockList().Block(addr) // the operator, on a
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	fixed := startStrangerAt(t, reg, tune, addr, "shop")
	require.Equal(t, addr, fixed.sys.Address())

	awaitReach(t, events, b.sys.Address(), false) // b reaches it: lifted there
	require.True(t, remote.Get(a.sys).BlockList().IsBlocked(addr), "the vote lifted the hand's block")
	require.True(t, cluster.Review13Suspended(a.c, addr), "a lifted a member it cannot reach (blocked by hand)")

	remote.Get(a.sys).BlockList().Unblock(addr) // the operator again
	awaitReach(t, events, a.sys.Address(), false)
	require.False(t, cluster.Review13Suspended(a.c, addr))
}
