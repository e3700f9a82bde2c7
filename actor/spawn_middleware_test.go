package actor_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Spawn middleware sees every spawn below the actor whose Props
// carry it (children and grandchildren inherit it), after the system's
// middleware, and may decorate the Props.
func TestSpawnMiddlewareInheritedAndOrdered(t *testing.T) {
	var mu sync.Mutex
	var log []string
	record := func(tag string) actor.SpawnMiddleware {
		return func(next actor.SpawnFunc) actor.SpawnFunc {
			return func(info actor.SpawnInfo, props *actor.Props) (*actor.PID, error) {
				mu.Lock()
				log = append(log, tag+":"+info.Name)
				mu.Unlock()
				return next(info, props)
			}
		}
	}
	sys := testkit.NewSystem(t, testkit.WithConfig(actor.SystemConfig{SpawnMiddleware: []actor.SpawnMiddleware{record("sys")}}))
	probe := testkit.NewProbe(t, sys)
	leaf := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			c.Send(probe.PID(), "leaf started")
		}
	})
	mid := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			_, err := c.SpawnNamed(leaf, "leaf")
			require.NoError(t, err)
		}
	})
	top := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			_, err := c.SpawnNamed(mid, "mid")
			require.NoError(t, err)
		}
	}, actor.WithSpawnMiddleware(record("top")))
	_, err := sys.Root().SpawnNamed(top, "top")
	require.NoError(t, err)
	probe.ExpectMsgEqual("leaf started", 0)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"sys:" /* the probe */, "sys:top", "sys:mid", "top:mid", "sys:leaf", "top:leaf"}, log)
}

// A middleware may refuse a spawn or decorate the Props; a panicking one
// fails a root spawn with an error, not a crash.
func TestSpawnMiddlewareRefuseDecoratePanic(t *testing.T) {
	errNo := errors.New("no")
	sys := testkit.NewSystem(t, testkit.WithConfig(actor.SystemConfig{SpawnMiddleware: []actor.SpawnMiddleware{func(next actor.SpawnFunc) actor.SpawnFunc {
		return func(info actor.SpawnInfo, props *actor.Props) (*actor.PID, error) {
			switch info.Name {
			case "refused":
				return nil, errNo
			case "panics":
				panic("middleware bug")
			case "decorated":
				props = props.With(actor.WithReceiveMiddleware(func(next actor.ReceiveFunc) actor.ReceiveFunc {
					return func(c actor.Context) {
						if c.Message() == "ping" {
							c.Respond("decorated pong")
							return
						}
						next(c)
					}
				}))
			}
			return next(info, props)
		}
	}}}))
	props := actor.PropsFromFunc(func(actor.Context) {})
	_, err := sys.Root().SpawnNamed(props, "refused")
	require.ErrorIs(t, err, errNo)
	_, err = sys.Root().SpawnNamed(props, "panics")
	var pe *actor.PanicError
	require.ErrorAs(t, err, &pe)
	pid, err := sys.Root().SpawnNamed(props, "decorated")
	require.NoError(t, err)
	v, err := actor.Request[string](context.Background(), sys.Root(), pid, "ping")
	require.NoError(t, err)
	require.Equal(t, "decorated pong", v)
}
