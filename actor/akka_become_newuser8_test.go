package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka's become(b, discardOld = false) / unbecome: BecomeStacked pushes,
// UnbecomeStacked pops, and popping past the bottom returns to Receive (no
// error). Unlike Akka's become(b) (discardOld = true), which replaces only
// the top of the stack, Become clears the whole stack: one UnbecomeStacked
// after it returns to Receive.
func TestAkkaBecomeUnbecomeStack(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	var named func(name string) actor.ReceiveFunc
	named = func(name string) actor.ReceiveFunc {
		return func(c actor.Context) {
			switch m := c.Message().(type) {
			case string:
				switch m {
				case "push":
					c.BecomeStacked(named(name + "+"))
				case "replace":
					c.Become(named(name + "*"))
				case "pop":
					c.UnbecomeStacked()
				default:
					c.Send(probe.PID(), name)
				}
			}
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(named("r")))
	for _, step := range []struct{ cmd, want string }{
		{"push", "r+"}, {"push", "r++"}, {"pop", "r+"}, {"push", "r++"}, {"replace", "r++*"}, {"pop", "r"}, {"pop", "r"},
	} {
		sys.Root().Send(pid, step.cmd)
		sys.Root().Send(pid, "who")
		probe.ExpectMsgEqual(step.want, time.Second)
	}
}
