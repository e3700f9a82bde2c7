package actor_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// traced is what a tracing middleware might wrap messages in.
type traced struct {
	trace string
	body  any
}

// unwrapping is a Context as a receive middleware hands it on: it embeds
// the runtime's Context and overrides Message to take the body out of a
// traced envelope.
type unwrapping struct {
	actor.Context
	msg any
}

func (u *unwrapping) Message() any { return u.msg }

// countingSend wraps the Context it is given before it calls next, as a
// send middleware may.
type countingSend struct {
	actor.Context
}

// A receive middleware and a send middleware that wrap the Context: the
// actor handles every message through the wrapper (Respond, Spawn, Stash,
// UnstashAll, Forward) and never fails or restarts.
func TestMiddlewareMayWrapContext(t *testing.T) {
	sys := testkit.NewSystem(t)
	var started, sends atomic.Int32
	unwrap := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if m, ok := c.Message().(*traced); ok {
				next(&unwrapping{Context: c, msg: m.body})
				return
			}
			next(c)
		}
	}
	count := func(next actor.SendFunc) actor.SendFunc {
		return func(c actor.Context, target *actor.PID, msg any, sender *actor.PID) {
			sends.Add(1)
			next(countingSend{c}, target, msg, sender)
		}
	}
	child := actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond("child:" + s)
		}
	}, actor.WithReceiveMiddleware(unwrap)) // Forward hands on the traced envelope
	open := false
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			started.Add(1)
		case string:
			switch m {
			case "ping":
				c.Respond("pong")
			case "spawn":
				kid := c.Spawn(child)
				c.Forward(kid)
			case "later":
				if !open {
					c.Stash()
					return
				}
				c.Respond("late")
			case "release":
				open = true
				c.UnstashAll()
				c.Respond("released")
			}
		}
	}, actor.WithReceiveMiddleware(unwrap), actor.WithSendMiddleware(count)))

	ask := func(msg any) any {
		t.Helper()
		v, err := sys.Root().RequestFuture(pid, &traced{trace: "t1", body: msg}, 5*time.Second).Result()
		require.NoError(t, err)
		return v
	}
	require.Equal(t, "pong", ask("ping"))
	require.Equal(t, "child:spawn", ask("spawn"))
	// The stashed request comes back after release, through the wrapper
	// again, and its sender (a future) gets the answer.
	later := sys.Root().RequestFuture(pid, &traced{body: "later"}, 5*time.Second)
	require.Equal(t, "released", ask("release"))
	v, err := later.Result()
	require.NoError(t, err)
	require.Equal(t, "late", v)
	require.Equal(t, int32(1), started.Load(), "the actor restarted")
	require.GreaterOrEqual(t, sends.Load(), int32(3), "the send middleware saw the sends")
}

// A middleware that panics while the chain is built is the actor's
// failure, supervised like a panic in Receive: the actor restarts, builds
// its chain again and serves.
func TestMiddlewarePanicIsSupervised(t *testing.T) {
	sys := testkit.NewSystem(t)
	var calls atomic.Int32
	flaky := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		if calls.Add(1) == 1 {
			panic("middleware construction failed")
		}
		return next
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "ping" {
			c.Respond("pong")
		}
	}, actor.WithReceiveMiddleware(flaky)))
	v, err := sys.Root().RequestFuture(pid, "ping", 5*time.Second).Result()
	require.NoError(t, err)
	require.Equal(t, "pong", v)
	require.Equal(t, int32(2), calls.Load())
}
