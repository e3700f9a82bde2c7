package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A busy refusal says what the owner waits for: the text reaches a caller
// whose deadline ends first (ErrTimeout wraps it), and a new member's
// wait-out, a pending earlier owner and a stopping activation otherwise all
// read "activation busy".
func TestPlacementCoreBusyRefusalSaysWhy(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mB, mC})
	t2 := NewTopology(2, []Member{mB, mC})

	t.Run("a member that joined waits out departures", func(t *testing.T) {
		c := newTestCore(mB)
		mustInstall(t, c, t2, coreT0) // a first view after epoch 1
		x := ownedBy(t, "user", mB, t2)
		_, _, r := c.activate(x, t2.Epoch, t2.Hash, coreT0.Add(time.Second))
		refusedWith(t, r, errBusy)
		assert.Contains(t, r.Error(), x.String())
		assert.Contains(t, r.Error(), "waits out members that may have left")
		assert.Contains(t, r.Error(), (coreW-time.Second).String()+" more")
	})
	t.Run("an earlier owner has not handed over", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, t1, coreT0)
		tv := coreT0.Add(time.Second)
		mustInstall(t, c, t2, tv)
		x := moving(t, "user", t1, t2, mA, mB)
		_, _, r := c.activate(x, t2.Epoch, t2.Hash, tv)
		refusedWith(t, r, errBusy)
		assert.Contains(t, r.Error(), "handover barrier")
		assert.Contains(t, r.Error(), mA.Key())
	})
	t.Run("the previous activation is stopping", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, t2, coreT0)
		x := ownedBy(t, "user", mB, t2)
		a := grant(t, c, x, coreT0)
		require.NotNil(t, c.passivate(a.pid, coreT0))
		_, _, r := c.activate(x, t2.Epoch, t2.Hash, coreT0)
		refusedWith(t, r, errBusy)
		assert.Contains(t, r.Error(), "still stopping")
	})
}
