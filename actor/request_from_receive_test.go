package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// wrappedContext is what a receive middleware may hand the actor: a
// Context of its own around the runtime's.
type wrappedContext struct{ actor.Context }

// TestRequestFromReceiveDoesNotStrandTheTarget: a Receive on the shared
// pool that requests a local actor and waits for the answer (actor.Request
// with the actor's Context, RequestFuture then Result, through a receive
// middleware's Context, or to a child it has just spawned) gets it, with
// a second worker to run the target. Before, the request's send put the
// target into the blocked worker's run-next slot, which no other worker
// takes: every such request waited out its timeout (2 s here), the other
// worker idle.
func TestRequestFromReceiveDoesNotStrandTheTarget(t *testing.T) {
	pong := actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "ping" {
			c.Respond("pong")
		}
	})
	cases := map[string]func(c actor.Context, target *actor.PID) (any, error){
		"Request": func(c actor.Context, target *actor.PID) (any, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return actor.Request[string](ctx, c, target, "ping")
		},
		"RequestFuture.Result": func(c actor.Context, target *actor.PID) (any, error) {
			return c.RequestFuture(target, "ping", 2*time.Second).Result()
		},
		"RequestFuture.Done in a select": func(c actor.Context, target *actor.PID) (any, error) {
			f := c.RequestFuture(target, "ping", 0)
			select {
			case <-f.Done():
				return f.Result()
			case <-time.After(2 * time.Second):
				return nil, context.DeadlineExceeded
			}
		},
		"Request through a wrapper": func(c actor.Context, target *actor.PID) (any, error) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return actor.Request[string](ctx, wrappedContext{c}, target, "ping")
		},
		"Request to a new child": func(c actor.Context, _ *actor.PID) (any, error) {
			child := c.Spawn(pong)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return actor.Request[string](ctx, c, child, "ping")
		},
	}
	for name, ask := range cases {
		t.Run(name, func(t *testing.T) {
			sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Workers = 2 })
			target := sys.Root().Spawn(pong)
			type answer struct {
				v   any
				err error
			}
			out := make(chan answer, 1)
			asker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if c.Message() == "go" {
					v, err := ask(c, target)
					out <- answer{v, err}
				}
			}))
			// Both workers parked first, so that nothing but the request
			// can wake the second one.
			pool := sys.Dispatcher().(*scheduler.Coordinator)
			testkit.Eventually(t, func() bool { return pool.Parked() == 2 }, 10*time.Second, "the pool did not go idle")
			// Sent, not requested: the asker's turn runs on a worker (a
			// request from outside may run it on the caller instead).
			sys.Root().Send(asker, "go")
			a := <-out
			require.NoError(t, a.err)
			require.Equal(t, "pong", a.v)
		})
	}
}
