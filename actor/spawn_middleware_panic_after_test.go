package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A RootContext spawn whose middleware panics after next has spawned the
// actor leaves nothing spawned, as SpawnMiddleware documents: the caller
// gets the *PanicError and no PID, so the actor is stopped. Before, it
// lived on, a child of the user guardian that nobody knew of.
func TestSpawnMiddlewarePanicAfterNextStopsTheActor(t *testing.T) {
	stopped := make(chan struct{})
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) {
		c.SpawnMiddleware = []actor.SpawnMiddleware{func(next actor.SpawnFunc) actor.SpawnFunc {
			return func(info actor.SpawnInfo, p *actor.Props) (*actor.PID, error) {
				if _, err := next(info, p); err != nil {
					return nil, err
				}
				panic("after next")
			}
		}}
	})
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Stopped:
			close(stopped)
		}
	}), "orphan")
	var pe *actor.PanicError
	require.ErrorAs(t, err, &pe)
	require.Nil(t, pid)
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("the actor the panicking spawn made lives on")
	}
}
