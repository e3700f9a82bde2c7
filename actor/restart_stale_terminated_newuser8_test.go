package actor_test

// A defect found by newuser8; this test fails on the code it was written
// against (see the report).

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka's DeviceGroup pattern: a parent spawns named children, watches them
// and forgets a child on its Terminated. When the parent restarts, the
// restart stops its children, and the watch (which survives the restart)
// delivers their Terminated to the new instance, after its Started. The new
// instance has by then spawned children under the same names, and a PID
// names a name, not an incarnation: the stale Terminated's Who equals the
// new, live child (same ID), so the parent forgets a live child. Later it
// cannot re-create it (ErrNameExists) and loses track of it. In Akka an
// ActorRef carries its incarnation's UID, so Terminated(old) never equals
// the new ref. Expected: the new instance does not get a Terminated for
// the previous instance's children (the restart stopped them and waited
// for them, as it cancels the old instance's timers), or gets it before
// Started; in no case one that names a live child.
func TestNewuser8RestartedParentGetsStaleTerminatedNamingItsLiveChild(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	parent := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				kid, err := c.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "device-1")
				if err != nil {
					c.Send(probe.PID(), "spawn failed: "+err.Error())
					return
				}
				c.Watch(kid)
			case *actor.Terminated:
				for _, live := range c.Children() {
					if live.Equal(m.Who) {
						c.Send(probe.PID(), "Terminated names a live child: "+m.Who.String())
						return
					}
				}
				c.Send(probe.PID(), "Terminated of a child that is gone")
			case string:
				panic("boom")
			}
		})
	}))
	sys.RunUntilIdle()
	sys.Root().Send(parent, "boom")
	sys.RunUntilIdle()
	if r, ok := probe.Receive(time.Second); ok {
		t.Fatalf("after the parent's restart: %v", r.Msg)
	}
}
