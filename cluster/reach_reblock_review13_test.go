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

// review13 (F2, rewritten for suspensions): the vote decides, and only
// the vote: one member that cannot reach a member the majority reaches
// keeps it out of its own owner selection, but neither evicts it nor
// makes the others leave it out. Here x first refuses everyone (a and b
// suspend it, 2 of 3), then only a (a firewall rule left on one host): b
// lifts the suspension when its link comes up, and stays so (one report
// of three is no majority); x's incarnation is not evicted again.
func TestReview13OneMemberCannotReblockWhatTheMajorityReaches(t *testing.T) {
	reg := fastRegistry(t)
	tune := reachTiming()
	same := func(*remote.Config) {}
	a := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
	b := startReview13Member(t, reg, tune, same, "127.0.0.1:0", "shop")
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
	addr := freeAddress(t)
	events := reachEvents(addr, a, b)
	x := startReview13Member(t, reg, tune, verify, addr, "shop")
	awaitMembers(t, 3, a, b)
	awaitReach(t, events, a.sys.Address(), true)
	awaitReach(t, events, b.sys.Address(), true)

	// Phase 2: x refuses only a; b's probe connects and b lifts it.
	aAddr := a.sys.Address()
	refuse.Store(func(p remote.Peer) bool { return p.Address == aAddr })
	awaitReach(t, events, b.sys.Address(), false)
	key := x.c.Self().Key()
	awaitMembers(t, 3, b)

	// Five After (1 s): b never suspends it again, and the incarnation b
	// sees is never evicted (a alone cannot).
	quiet := time.After(time.Second) // a bound on a non-event, not a wait for one
	for {
		select {
		case e := <-events.ch:
			if e[0] == b.sys.Address() && e[1] == true {
				t.Fatal("b suspended x again on one report of three")
			}
		case <-quiet:
			require.False(t, cluster.Review13Suspended(b.c, addr))
			require.Equal(t, key, x.c.Self().Key(), "x was evicted again (a new incarnation)")
			return
		}
	}
}
