package cluster_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// review15NoEvict is a provider without Evictor (as a custom provider may
// be): the members it serves evict nobody.
type review15NoEvict struct{ cluster.Provider }

// review15 F1: a lift racing a block by hand drops the hand's block from
// owner selection. vote (reachability.go) reads remote's block list
// (!bl.IsBlocked) and then calls lift, which puts the member back
// (exclude(false)) without looking again; onBlockEvent runs on the
// goroutine that calls Block, in between. This test plays that
// interleaving on a: the vote has read "not blocked", the operator's
// Block is applied (x out), then the lift runs. On branch reach, x is an
// owner again on a (caller ring and, through the queued unblock,
// the placement core, which acknowledges views to it again) while remote
// refuses it: every request routed to x's share fails until a view
// without x comes, and with a provider that cannot evict, for as long as
// x stays listed. A hand block must stay.
func TestReview15LiftRacingHandBlockKeepsTheHandBlock(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	// a and b cannot evict: x stays in their views, under one key.
	a := startMemberWith(t, review15NoEvict{reg}, tune, counterKind())
	b := startMemberWith(t, review15NoEvict{reg}, tune, counterKind())
	addr := freeAddress(t)
	events := reachEvents(addr, a, b)
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	awaitReach(t, events, a.sys.Address(), true)
	xm := x.c.Self()

	// vote on a: link up, vote over, bl.IsBlocked(x) false ... then:
	remote.Get(a.sys).BlockList().Block(addr) // the operator, on a (applied synchronously)
	require.True(t, cluster.Review14Blocked(a.c, xm.Key()), "the hand block did not take x out")
	cluster.Review15Lift(a.c, xm) // ... the vote's lift, decided before the block

	require.True(t, remote.Get(a.sys).BlockList().IsBlocked(addr))
	require.True(t, cluster.Review14Blocked(a.c, xm.Key()),
		"a lift that raced a hand Block put a member remote refuses back in owner selection")
}
