package cluster

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestPlacementCoreHoldsEarlyAcks: an acknowledgement (or a vouch) from a
// member the core does not know yet is applied once a view names it, so a
// joiner whose first view comes after the others' acknowledgements of the
// view that added it grants at once. Before, they were dropped and the
// joiner waited for the senders' next tick, blind and behind its barrier
// (TestVirtualClusterBlockingFirstCalls in testkit).
func TestPlacementCoreHoldsEarlyAcks(t *testing.T) {
	t.Run("a vouch before the joiner's first view", func(t *testing.T) {
		c := newTestCore(mC)
		tp := NewTopology(9, []Member{mB, mC})
		c.vouched(mB.Key(), tp.Epoch, coreT0) // no view yet
		mustInstall(t, c, tp, coreT0)
		grant(t, c, ownedBy(t, "user", mC, tp), coreT0)
		assert.True(t, c.vouches(coreT0), "vouched for, it vouches in turn")
	})
	t.Run("an older vouch held stays too old", func(t *testing.T) {
		c := newTestCore(mC)
		tp := NewTopology(9, []Member{mB, mC})
		c.vouched(mB.Key(), tp.Epoch-1, coreT0)
		mustInstall(t, c, tp, coreT0)
		_, _, r := c.activate(ownedBy(t, "user", mC, tp), tp.Epoch, tp.Hash, coreT0)
		refusedWith(t, r, errBusy)
	})
	t.Run("acks before the first view clear its barrier", func(t *testing.T) {
		c := newTestCore(mC)
		tp := NewTopology(1, []Member{mB, mC}) // the provider's first view: no wait-out
		c.ack(mB.Key(), tp.Epoch, coreT0)      // no view yet
		mustInstall(t, c, tp, coreT0)
		// Every member of a first view may have owned anything before
		// it; b's acknowledgement, held, says it runs nothing c owns.
		grant(t, c, ownedBy(t, "user", mC, tp), coreT0)
		assert.Empty(t, c.unknown, "the barrier cleared")
	})
	t.Run("bounded and forgotten when stale", func(t *testing.T) {
		c := newTestCore(mC)
		for i := range 3 * maxEarlyAcks {
			c.ack(fmt.Sprintf("made-up-%d", i), 5, coreT0)
		}
		assert.Len(t, c.early, maxEarlyAcks)
		c.vouched(mB.Key(), 9, coreT0) // dropped: the table is full
		mustInstall(t, c, NewTopology(9, []Member{mB, mC}), coreT0)
		assert.Empty(t, c.early, "the view forgets the acks of members it does not name")
		_, _, r := c.activate(ownedBy(t, "user", mC, c.view), c.view.Epoch, c.view.Hash, coreT0)
		refusedWith(t, r, errBusy)

		for i := range maxEarlyAcks {
			c.ack(fmt.Sprintf("made-up-%d", i), 1<<60, coreT0) // from the far future
		}
		assert.Len(t, c.early, maxEarlyAcks)
		mustInstall(t, c, NewTopology(10, []Member{mB, mC, mD}), coreT0)
		assert.Empty(t, c.early, "forgotten at the next view, whatever their epoch")
	})
}

// TestPlacementCoreSettled: the view settles once the core acknowledges it
// itself, is not blind, and every member of the view acknowledged the
// barrier's epoch; a member that left does not hold it back, a member still
// in the view does, and a leaving core never settles.
func TestPlacementCoreSettled(t *testing.T) {
	c := newTestCore(mC)
	tp := NewTopology(9, []Member{mB, mC})
	mustInstall(t, c, tp, coreT0)
	assert.False(t, c.settled(coreT0), "blind, and b has not acknowledged")
	c.ack(mB.Key(), tp.Epoch, coreT0)
	assert.False(t, c.settled(coreT0), "acknowledged, but nobody vouched")
	c.vouched(mB.Key(), tp.Epoch, coreT0)
	assert.True(t, c.settled(coreT0))

	t2 := NewTopology(10, []Member{mB, mC, mD})
	mustInstall(t, c, t2, coreT0)
	assert.False(t, c.settled(coreT0), "d has not acknowledged view 10")
	c.ack(mD.Key(), t2.Epoch, coreT0)
	assert.False(t, c.settled(coreT0), "b acknowledged 9, not 10")
	c.ack(mB.Key(), t2.Epoch, coreT0)
	assert.True(t, c.settled(coreT0))

	t3 := NewTopology(11, []Member{mC, mD}) // b left without a released marker
	mustInstall(t, c, t3, coreT0)
	c.ack(mD.Key(), t3.Epoch, coreT0)
	assert.True(t, c.settled(coreT0), "a departed member does not hold the view back")
	assert.NotEmpty(t, c.history, "though the barrier still waits it out")

	c.beginShutdown(coreT0)
	assert.False(t, c.settled(coreT0), "leaving")
}

// TestPlacementCoreSettledPastTheHistoryBound: past maxBarrierHistory a
// pending member of the history holds back every identity (barrierWait),
// so the view has not settled, though every member of it acknowledged it.
func TestPlacementCoreSettledPastTheHistoryBound(t *testing.T) {
	c := newTestCore(mC)
	joinView(t, c, NewTopology(1, []Member{mB, mC, mD}), coreT0)
	epoch := uint64(2)
	install := func(ms ...Member) {
		tp := NewTopology(epoch, ms)
		mustInstall(t, c, tp, coreT0)
		for _, m := range ms {
			c.ack(m.Key(), epoch, coreT0)
		}
		epoch++
	}
	install(mB, mC) // d leaves without a released marker: pending for W
	mE := coreMember("e")
	for len(c.history) < maxBarrierHistory {
		install(mB, mC, mE)
		install(mB, mC)
	}
	_, _, r := c.activate(ownedBy(t, "user", mC, c.view), c.view.Epoch, c.view.Hash, coreT0)
	refusedWith(t, r, errBusy)
	assert.False(t, c.settled(coreT0), "every identity waits for d")
	assert.True(t, c.settled(coreT0.Add(coreW)), "d waited out")
}
