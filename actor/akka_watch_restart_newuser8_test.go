package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka: a watch belongs to the actor, not to an instance: after the watcher
// restarts, the new instance still gets Terminated of what the old one
// watched.
func TestAkkaWatchSurvivesWatcherRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	watcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			switch m {
			case "watch":
				c.Watch(target)
			case "boom":
				panic("boom")
			}
		case *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}))
	sys.Root().Send(watcher, "watch")
	sys.Root().Send(watcher, "boom")
	sys.RunUntilIdle()
	sys.Root().Stop(target)
	term := testkit.ExpectMsg[*actor.Terminated](probe, time.Second)
	if !term.Who.Equal(target) {
		t.Fatalf("Terminated of %v", term.Who)
	}
}
