package cluster

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A local activation is routable only between a resolution publishing its
// PID and a withdrawal (handover, passivation, a failed request) or its
// removal from the table; a PID of another activation neither publishes nor
// withdraws it.
func TestLocalActivationsRoute(t *testing.T) {
	tab := newLocalActivations()
	id := NewIdentity("user", "x")
	a := &activation{id: id}
	tab.put(a)
	pid := actor.NewPID("127.0.0.1:1", "placement/user/x")
	assert.Nil(t, tab.route(id), "no PID yet")
	assert.False(t, tab.publish(id, pid), "not started yet")
	tab.setPID(a, pid)
	assert.Nil(t, tab.route(id), "not published yet")

	other := actor.NewPID("127.0.0.1:1", "placement/user/x$2")
	assert.False(t, tab.publish(id, other), "another activation's PID")
	assert.False(t, tab.publish(NewIdentity("user", "y"), pid), "no activation of y")
	require.True(t, tab.publish(id, actor.NewPID(pid.Address, pid.ID)))
	assert.Same(t, pid, tab.route(id))

	assert.False(t, tab.withdraw(id, other.ID), "another activation's PID")
	assert.Same(t, pid, tab.route(id))
	assert.True(t, tab.withdraw(id, pid.ID))
	assert.Nil(t, tab.route(id))
	assert.False(t, tab.withdraw(id, ""), "already withdrawn")

	require.True(t, tab.publish(id, pid))
	assert.Equal(t, 1, tab.len())
	tab.remove(&activation{id: id})
	assert.Equal(t, 1, tab.len(), "only the entry's own activation removes it")
	tab.remove(a)
	assert.Zero(t, tab.len())
	assert.Nil(t, tab.route(id), "gone with the activation")
	assert.False(t, tab.withdraw(id, ""))
}

func BenchmarkLocalActivationsRoute(b *testing.B) {
	tab := newLocalActivations()
	id := NewIdentity("user", "x")
	a := &activation{id: id}
	tab.put(a)
	pid := actor.NewPID("127.0.0.1:1", "placement/user/x")
	tab.setPID(a, pid)
	tab.publish(id, pid)
	b.ReportAllocs()
	for b.Loop() {
		if tab.route(id) != pid {
			b.Fatal("not routed")
		}
	}
}

// A resolution publishes the PID it was answered with after the answer
// arrived, on the caller's goroutine; the activation may have begun to stop
// meanwhile (passivation, handover, shutdown, fence), and the placement
// actor withdrew its route then. That late publish must not make the
// stopping grain routable again: what callers sent to it would queue behind
// its PoisonPill (or Stop) and become dead letters until it terminated.
func TestLocalActivationsStoppingNotPublished(t *testing.T) {
	tp := NewTopology(1, []Member{mA, mB})
	tp2 := NewTopology(2, []Member{mA, mB, mC})
	x := moving(t, "user", tp, tp2, mB, mC)
	for _, tc := range []struct {
		name string
		stop func(c *placementCore, a *activation)
	}{
		{"passivated", func(c *placementCore, a *activation) { require.Same(t, a, c.passivate(a.pid, coreT0)) }},
		{"handed over", func(c *placementCore, a *activation) {
			require.Equal(t, []*activation{a}, mustInstall(t, c, tp2, coreT0).moved)
		}},
		{"shut down", func(c *placementCore, a *activation) { require.Equal(t, []*activation{a}, c.beginShutdown(coreT0)) }},
		{"fenced", func(c *placementCore, a *activation) {
			c.setLease(heldLease(coreT0.Add(coreS / 2)))
			_, fence, stop := c.tick(coreT0)
			require.True(t, fence)
			require.Equal(t, []*activation{a}, stop)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCore(mB)
			joinView(t, c, tp, coreT0)
			a := grant(t, c, x, coreT0)
			require.True(t, c.acts.publish(x, a.pid))
			require.Same(t, a.pid, c.acts.route(x))
			tc.stop(c, a)
			c.acts.withdraw(x, "") // as the placement actor does
			assert.True(t, c.acts.publish(x, a.pid), "a local activation: no PidCache entry either")
			assert.Nil(t, c.acts.route(x), "the stopping grain routable again")
		})
	}
}
