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

// TestReview11RequestFromReceiveOnOwnPoolDoesNotStrandTheTarget shows a
// defect of 27ebdac: the fix covers only the system's shared pool. An
// actor that runs on a Coordinator of its own (WithDispatcher, or
// SystemConfig.Dispatcher) and requests, from its Receive, an actor of
// the same pool still waits out the request's timeout, the pool's other
// worker parked. The request's send puts the target into the asker's
// worker's run-next slot (ScheduleFrom: the worker belongs to the
// target's pool); Worker.Release moves it to that pool's ready queue
// without a wake, as designed; but the waiter's WakeIdle goes to the
// system's shared pool (f.sys.coord, nil with SystemConfig.Dispatcher),
// never to the pool that holds the target. The target runs only when
// something else schedules onto that pool, here never.
//
// Fixed on 2026-11-25 (the test failed before). Suggested then: wake the pool the asker's worker belongs to. For example
// Release returns that worker's Coordinator (nil when it moved nothing),
// the request keeps it in the Future, and the waiters (waitDone,
// ResultContext, awaitSignal) call WakeIdle on it instead of on
// f.sys.coord.
func TestReview11RequestFromReceiveOnOwnPoolDoesNotStrandTheTarget(t *testing.T) {
	pong := func(opts ...actor.PropsOption) *actor.Props {
		return actor.PropsFromFunc(func(c actor.Context) {
			if c.Message() == "ping" {
				c.Respond("pong")
			}
		}, opts...)
	}
	type answer struct {
		v   any
		err error
	}
	// ask has the asker request the target from its Receive, three times
	// over, each time with every worker of own parked first: a wake still
	// on its way from the spawns could run the target the first time.
	ask := func(t *testing.T, sys *actor.System, own *scheduler.Coordinator, opts ...actor.PropsOption) {
		target := sys.Root().Spawn(pong(opts...))
		out := make(chan answer, 1)
		asker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if c.Message() == "go" {
				// The timeout is the failure: the answer is the event.
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				v, err := actor.Request[string](ctx, c, target, "ping")
				out <- answer{v, err}
			}
		}, opts...))
		for i := range 3 {
			testkit.Eventually(t, func() bool { return own.Parked() == own.Workers() && own.Queued() == 0 }, 5*time.Second)
			sys.Root().Send(asker, "go")
			a := <-out
			require.NoError(t, a.err, "round %d: the target stayed in its pool's ready queue, the pool's other worker parked", i)
			require.Equal(t, "pong", a.v)
		}
	}
	t.Run("WithDispatcher", func(t *testing.T) {
		own := scheduler.NewCoordinator(scheduler.Config{Name: "own", Workers: 2})
		own.Start()
		t.Cleanup(func() { require.NoError(t, own.Shutdown(context.Background())) }) // after the system's
		sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Workers = 2 })
		ask(t, sys, own, actor.WithDispatcher(own))
	})
	t.Run("SystemConfig.Dispatcher", func(t *testing.T) {
		own := scheduler.NewCoordinator(scheduler.Config{Name: "own", Workers: 2})
		own.Start()
		t.Cleanup(func() { require.NoError(t, own.Shutdown(context.Background())) })
		sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Dispatcher = own })
		ask(t, sys, own)
	})
}
