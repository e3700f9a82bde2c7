package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A child waiting for its backoff restart can be stopped: it ends (its
// watchers get Terminated) and the pending restart does not bring it back.
func TestAkkaStopDuringBackoff(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	kid := make(chan *actor.PID, 1)
	starts := 0
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			kid <- c.Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message().(type) {
				case *actor.Started:
					starts++
				case string:
					panic("flaky backend")
				}
			}))
		}
	}, actor.WithSupervisor(actor.ExponentialBackoff())))
	sys.RunUntilIdle()
	child := <-kid
	probe.Watch(child)
	sys.Root().Send(child, "go")
	sys.RunUntilIdle()
	sys.Advance(50 * time.Millisecond) // the restart is due at 100 ms
	sys.Root().Stop(child)
	probe.ExpectTerminated(child, time.Second)
	sys.Advance(time.Minute)
	if starts != 1 {
		t.Fatalf("started %d times: the pending restart ran after the stop", starts)
	}
	// The same with the parent stopped during the wait.
	sys.Root().Send(child, "go") // a dead letter now
	probe.Watch(parent)
	sys.Root().Stop(parent)
	probe.ExpectTerminated(parent, time.Second)
}

// The parent stopped while its child waits for a backoff restart: both end,
// nothing restarts.
func TestAkkaParentStopDuringChildBackoff(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	kid := make(chan *actor.PID, 1)
	starts := 0
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			kid <- c.Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message().(type) {
				case *actor.Started:
					starts++
				case string:
					panic("flaky backend")
				}
			}))
		}
	}, actor.WithSupervisor(actor.ExponentialBackoff())))
	sys.RunUntilIdle()
	child := <-kid
	probe.Watch(child)
	probe.Watch(parent)
	sys.Root().Send(child, "go")
	sys.RunUntilIdle()
	sys.Advance(50 * time.Millisecond)
	sys.Root().Stop(parent)
	probe.ExpectTerminated(child, time.Second)
	probe.ExpectTerminated(parent, time.Second)
	sys.Advance(time.Minute)
	if starts != 1 {
		t.Fatalf("started %d times", starts)
	}
}
