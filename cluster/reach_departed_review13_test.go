package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// The vote judges members of the view (docs/cluster.md: "a member still
// unreachable then is blocked again"). On branch reach, the vote's blocks
// and probations are kept by address, apart from the view: once the
// member voted out has left for good (here the stranger shuts down), its
// address still cycles for ever between the vote's block and a
// probation, on every member that applied the block: each probation
// probes the address every tick (a dial to nobody), fails, and blocks it
// again for BlockFor (tickVoteBlocks), with an Info and a Warn log line
// each cycle. Every member that leaves after a vote (a crashed member
// that never comes back, an address a scheduler never reuses) adds an
// address that cycles for the process's life: remote's BlockList,
// reachState.blocks and Cluster.probation grow with churn, without bound.
// The vote's state of an address whose member left the view should end
// (at the latest when its block ends).
func TestReview13DepartedMemberLeavesNoVoteBlockBehind(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	a := startMemberWith(t, reg, tune, counterKind())
	b := startMemberWith(t, reg, tune, counterKind())
	changes := blockChanges(a)
	x := startStranger(t, reg, tune)
	awaitMembers(t, 3, a, b)
	addr := x.sys.Address()
	on := a.sys.Address()
	awaitBlockChange(t, changes, on, true) // voted out

	// It leaves for good.
	require.NoError(t, x.sys.Shutdown(ctxWait(t)))
	awaitMembers(t, 2, a, b)

	// Its block ends (BlockFor, 300 ms) and nothing of it remains: within
	// 3 s (ten BlockFor), ample under load.
	require.Eventually(t, func() bool {
		return !remote.Get(a.sys).BlockList().IsBlocked(addr) && !cluster.Review13Suspended(a.c, addr)
	}, 3*time.Second, 5*time.Millisecond, "the departed member's address stays blocked or on probation")
	// And stays so: watch 2 s, some four BlockFor and probation cycles.
	quiet := time.After(2 * time.Second)
	for {
		select {
		case c := <-changes:
			if c[0] == on && c[1] == true {
				require.Fail(t, "the address of a member that left is blocked again, and again",
					"a's block list: %v", remote.Get(a.sys).BlockList().Blocked())
			}
		case <-quiet:
			require.False(t, remote.Get(a.sys).BlockList().IsBlocked(addr))
			require.False(t, cluster.Review13Suspended(a.c, addr))
			return
		}
	}
}
