package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka: a child's name is taken until its Terminated arrives
// (InvalidActorNameException before). Here: SpawnNamed fails with
// ErrNameExists in the turn that stopped the child, and succeeds once the
// watch reported its end.
func TestAkkaChildNameFreeAfterTerminated(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			kid, _ := c.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "dev")
			c.Watch(kid)
			c.Stop(kid)
			_, err := c.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "dev")
			c.Send(probe.PID(), errors.Is(err, actor.ErrNameExists))
		case *actor.Terminated:
			_, err := c.SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "dev")
			c.Send(probe.PID(), err == nil)
		}
	}))
	probe.ExpectMsgEqual(true, time.Second) // taken while stopping
	probe.ExpectMsgEqual(true, time.Second) // free after Terminated
}
