package cluster_test

import (
	"crypto/x509"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// The vote decides who is blocked: a member that more than half of the
// view reports unreachable (docs/cluster.md, "Unreachable members"; one
// report of three blocks nobody). On branch reach, the end of a probation
// does not ask the vote again: a member whose own link to the member on
// probation did not come up blocks it again on its own
// (tickVoteBlocks → voteBlock), and that block is a full one: it evicts
// the member from the provider and its BlockNotice (block_for set) makes
// every other member block it again for BlockFor, also those whose link to
// it came up and readmitted it. So after one vote, a single member that
// cannot reach it keeps it blocked on every member, one BlockFor after
// another, though the majority reaches it and would never vote it out.
//
// Here x first refuses everyone (a and b vote it out, 2 of 3), then only
// a (a firewall rule left on one host): b's probation passes, and b must
// not block x again, since one report of three is no majority.
func TestReview13OneMemberCannotReblockWhatTheMajorityReaches(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	same := func(*remote.Config) {}
	a := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
	b := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
	// refuse: func(remote.Peer) bool, whom x refuses.
	var refuse atomic.Value
	refuse.Store(func(remote.Peer) bool { return true }) // phase 1: x refuses everyone
	errRefused := errors.New("review13: refused by the test's firewall")
	verify := func(c *remote.Config) {
		c.VerifyPeer = func(p remote.Peer, _ *x509.Certificate) error {
			if refuse.Load().(func(remote.Peer) bool)(p) {
				return errRefused
			}
			return nil
		}
	}
	changes := blockChanges(a, b)
	x := startReview13Member(t, reg, tune, verify, "127.0.0.1:0", "shop")
	awaitMembers(t, 3, a, b)
	addr := x.sys.Address()
	aAddr := a.sys.Address()
	bAddr := b.sys.Address()

	// Phase 1: x refuses everyone; a and b block it.
	blocked := map[string]bool{}
	deadline := time.After(wait)
	for !blocked[aAddr] || !blocked[bAddr] {
		select {
		case c := <-changes:
			if c[1] == true {
				blocked[c[0].(string)] = true
			}
		case <-deadline:
			t.Fatalf("x was never blocked by both: %v", blocked)
		}
	}
	// Phase 2: x refuses only a. b's link to x comes up on probation.
	refuse.Store(func(p remote.Peer) bool { return p.Address == aAddr })

	// b: the block ends, b readmits x (its link is up) ...
	for unblocked := false; !unblocked; {
		select {
		case c := <-changes:
			unblocked = c[0] == bAddr && c[1] == false
		case <-deadline:
			t.Fatal("b's block of x never ended")
		}
	}
	// ... its probe connects and b readmits x: b leaves out nobody ...
	require.Eventually(t, func() bool { return cluster.BlockedKeyCount(b.c) == 0 && !cluster.Review13Suspended(b.c, addr) },
		wait, 5*time.Millisecond, "b never readmitted x")
	// ... and no single report blocks it again there: watch for 2 s,
	// three BlockFor and probation cycles (a blocks x again after its
	// probation: 300 ms + 200 ms).
	quiet := time.After(2 * time.Second)
	for {
		select {
		case c := <-changes:
			if c[0] == bAddr && c[1] == true {
				require.Failf(t, "x blocked again on b",
					"b reaches x, only a cannot (1 report of 3); b's blocked list: %v", remote.Get(b.sys).BlockList().Blocked())
			}
		case <-quiet:
			require.False(t, remote.Get(b.sys).BlockList().IsBlocked(addr))
			return
		}
	}
}
