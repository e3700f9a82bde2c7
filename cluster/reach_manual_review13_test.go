package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// awaitBlockChange waits for the next change of the block of any key on
// node on to blocked (changes from blockChanges).
func awaitBlockChange(t *testing.T, changes <-chan [2]any, on string, blocked bool) {
	t.Helper()
	deadline := time.After(wait)
	for {
		select {
		case c := <-changes:
			if c[0] == on && c[1] == blocked {
				return
			}
		case <-deadline:
			t.Fatalf("the block on %s never became %v", on, blocked)
		}
	}
}

// A block made by hand is the operator's: the vote must not end it
// (docs/cluster.md: "a block made by hand before the vote's is not ended
// by it"; operations.md's runbook for a rogue member says to block it
// from any member). On branch reach, an operator who blocks a member
// while it is on probation (its vote's block ended, remote lets it
// through) sees the block lifted later: the probation fails (the member
// is blocked, its link cannot come up), tickVoteBlocks blocks it "again"
// for the vote (voteBlock, a no-op in remote's BlockList, which already
// holds it) and schedules the end of that block, and BlockFor later
// Unblock lifts the operator's block. The probation's re-block should
// leave a member that is blocked by then alone (as vote() does: a member
// already blocked is neither judged nor counted).
func TestReview13HandBlockDuringProbationIsNotLifted(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	changes := blockChanges(a)
	x := startStranger(t, reg, tune)
	awaitMembers(t, 3, a, b)
	addr := x.sys.Address()
	on := a.sys.Address()

	awaitBlockChange(t, changes, on, true)  // voted out
	awaitBlockChange(t, changes, on, false) // the block ended: probation
	// The operator blocks it by hand on a, for good.
	remote.Get(a.sys).BlockList().Block(addr)
	// Watch 2 s: some four BlockFor and probation cycles.
	quiet := time.After(2 * time.Second)
	for {
		select {
		case c := <-changes:
			if c[0] == on && c[1] == false {
				require.Fail(t, "the block made by hand was lifted by the vote",
					"a's block list: %v", remote.Get(a.sys).BlockList().Blocked())
			}
		case <-quiet:
			require.True(t, remote.Get(a.sys).BlockList().IsBlocked(addr))
			return
		}
	}
}

// An Unblock by hand makes the member eligible again on the member where
// it is called (docs/cluster.md, "Blocked"). On branch reach, an operator
// who unblocks a member the vote blocked, once it is fixed (here: the
// stranger replaced at its address by a member of the right system,
// unblocked on a and b), sees it blocked again, evicted and the others
// told, when the vote's block would have ended: tickVoteBlocks still holds
// the vote's block, puts the member on probation (remote's Unblock is a
// no-op then), and the probation waits for an EventConnected that never
// comes, since the link has been up since the hand unblock; at its end
// the member, reachable all along, is blocked again for BlockFor. An
// unblock by hand should end the vote's block (and any probation) of
// that address.
func TestReview13HandUnblockIsNotUndoneByTheVote(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	changes := blockChanges(a)
	addr := freeAddress(t)
	x := startStrangerAt(t, reg, tune, addr, "elsewhere")
	awaitMembers(t, 3, a, b)
	on := a.sys.Address()
	awaitBlockChange(t, changes, on, true) // voted out
	require.Eventually(t, func() bool { return remote.Get(b.sys).BlockList().IsBlocked(addr) },
		wait, 5*time.Millisecond, "b never blocked x")

	// Fixed: the stranger is replaced by a member of the right system,
	// and the operator unblocks it on a and b at once.
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	fixed := startStrangerAt(t, reg, tune, addr, "shop")
	require.Equal(t, addr, fixed.sys.Address())
	remote.Get(a.sys).BlockList().Unblock(addr)
	remote.Get(b.sys).BlockList().Unblock(addr)
	awaitBlockChange(t, changes, on, false)
	require.Eventually(t, func() bool { _, down := cluster.Review13LinkDownFor(a.c, addr); return !down },
		wait, 5*time.Millisecond, "a's link to the fixed member never came up")
	voted := make(chan *cluster.MemberUnreachable, 8)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.MemberUnreachable) { voted <- ev })

	// Watch 2.5 s: past the vote's block (500 ms) and its probation.
	quiet := time.After(2500 * time.Millisecond)
	for {
		select {
		case c := <-changes:
			if c[0] == on && c[1] == true {
				select {
				case ev := <-voted:
					t.Fatalf("voted unreachable again though its link is up: %+v", ev)
				default:
				}
				require.Fail(t, "the member unblocked by hand, reachable, was blocked again at the end of its probation",
					"a's block list: %v", remote.Get(a.sys).BlockList().Blocked())
			}
		case <-quiet:
			require.False(t, remote.Get(a.sys).BlockList().IsBlocked(addr))
			return
		}
	}
}
