package cluster

import (
	"testing"
	"time"
)

// TestReview9RejoinedCoreKeepsEarlyVouches: a core that rejoins (a new
// incarnation of this member) is a member that joins: the vouch of a
// member that has been in the cluster for W, for the view that adds the
// new incarnation, ends its blind period however early it came, as it
// does for a fresh joiner (TestPlacementCoreHoldsEarlyAcks, "a vouch before
// the joiner's first view"). A ViewAck names its sender only, so it means
// the same to the new incarnation. Both orders below lose it, and the
// rejoined member grants nothing until the voucher's next tick (in
// virtual time, until something moves the clock).
func TestReview9RejoinedCoreKeepsEarlyVouches(t *testing.T) {
	c2 := mC
	c2.Incarnation = 2
	t5 := NewTopology(5, []Member{mB, mC})
	t7 := NewTopology(7, []Member{mB, c2}) // the view that adds c's new incarnation

	t.Run("after the rejoin, before its first view", func(t *testing.T) {
		// rejoinMsg installs m.Latest() only when the new membership has
		// one; until then b, a member of the old incarnation's view, is
		// still "known" (known reads the old view), so the vouch is not
		// held: it is applied with firstEpoch 0, and installView's first
		// view then sets blindUntil again.
		c := newTestCore(mC)
		joinView(t, c, t5, coreT0)
		c.rejoin(c2)
		c.setLease(heldLease(coreT0.Add(time.Hour)))
		c.vouched(mB.Key(), t7.Epoch, coreT0)
		mustInstall(t, c, t7, coreT0)
		_, _, r := c.activate(ownedBy(t, "user", c2, t7), t7.Epoch, t7.Hash, coreT0)
		if r != nil {
			t.Errorf("refused after a vouch for its first view that came before it: %v", r)
		}
	})
	t.Run("to the fenced incarnation, before the rejoin", func(t *testing.T) {
		// b installs the view with c's new incarnation and vouches to c's
		// address before c's placement actor handled rejoinMsg: the old
		// core applies it (b is in its view) and rejoin clears it.
		c := newTestCore(mC)
		joinView(t, c, t5, coreT0)
		c.fence(coreT0)
		c.vouched(mB.Key(), t7.Epoch, coreT0)
		c.rejoin(c2)
		c.setLease(heldLease(coreT0.Add(time.Hour)))
		mustInstall(t, c, t7, coreT0)
		_, _, r := c.activate(ownedBy(t, "user", c2, t7), t7.Epoch, t7.Hash, coreT0)
		if r != nil {
			t.Errorf("refused after a vouch for its first view that came before it: %v", r)
		}
	})
}
