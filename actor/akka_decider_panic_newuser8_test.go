package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A decider that panics (user code in the parent's strategy) is the
// parent's failure: its own supervisor restarts it, which stops the child.
func TestAkkaPanicInDecider(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	kid := make(chan *actor.PID, 1)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			kid <- c.Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if c.Message() == "boom" {
					panic("child boom")
				}
				if s, ok := c.Message().(string); ok {
					c.Respond("child " + s)
				}
			}))
		case *actor.Restarting:
			c.Send(probe.PID(), "parent restarting")
		case string:
			c.Respond("parent alive")
		}
	}, actor.WithSupervisor(actor.OneForOne(3, time.Minute, func(error) actor.Directive { panic("decider bug") }))))
	sys.RunUntilIdle()
	child := <-kid
	probe.Watch(child)
	sys.Root().Send(child, "boom")
	sys.RunUntilIdle()
	probe.ExpectMsgEqual("parent restarting", time.Second)
	probe.ExpectTerminated(child, time.Second)
	probe.Send(parent, "ping")
	probe.ExpectMsgEqual("parent alive", time.Second)
}
