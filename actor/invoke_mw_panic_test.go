package actor_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// flakyMW panics in BeforeInvoke or AfterInvoke while its counter is
// positive.
type flakyMW struct {
	before, after *atomic.Int32
}

func (m flakyMW) BeforeInvoke(*scheduler.InvokeContext) scheduler.ControlFlow {
	if m.before.Add(-1) >= 0 {
		panic("before")
	}
	return scheduler.Continue
}

func (m flakyMW) AfterInvoke(*scheduler.InvokeContext, scheduler.InvokeResult) {
	if m.after.Add(-1) >= 0 {
		panic("after")
	}
}

// A panic in invoke middleware (BeforeInvoke, AfterInvoke, or the factory
// WithInvokeMiddleware calls at spawn) is the actor's failure, handled by
// its supervisor; the process lives, and the actor can be restarted and
// stopped. Before, it ended the process from the worker (or went through
// Spawn to its caller).
func TestInvokeMiddlewarePanicIsFailure(t *testing.T) {
	sup := failures{errs: make(chan error, 16)}
	sys := testkit.NewSystem(t, testkit.WithGuardianStrategy(sup))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	echo := func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond("ok")
		}
	}
	expectFailure := func(sup failures, value string) {
		t.Helper()
		select {
		case err := <-sup.errs:
			var pe *actor.PanicError
			require.True(t, errors.As(err, &pe), "%v", err)
			require.Equal(t, value, pe.Value)
		case <-ctx.Done():
			t.Fatalf("no failure for a %q panic", value)
		}
	}
	for _, tc := range []string{"before", "after"} {
		t.Run(tc, func(t *testing.T) {
			var before, after atomic.Int32
			if tc == "before" {
				before.Store(1)
			} else {
				after.Store(1)
			}
			pid := sys.Root().Spawn(actor.PropsFromFunc(echo, actor.WithInvokeMiddleware(func() scheduler.Middleware {
				return flakyMW{before: &before, after: &after}
			})))
			expectFailure(sup, tc)
			got, err := actor.Request[string](ctx, sys.Root(), pid, "hi")
			require.NoError(t, err, "restarted, it answers")
			require.Equal(t, "ok", got)
			require.NoError(t, sys.Root().StopFuture(pid).Wait())
		})
	}

	// A middleware that always panics, or whose factory panicked at spawn
	// (the actor keeps the middleware it was spawned with across restarts,
	// so it fails on every turn), still lets its actor be stopped. Each
	// case has a system of its own: the supervisor may still be handed a
	// failure of the restarting actor after its stop has completed, and
	// that failure must not reach the next case's expectFailure.
	for _, tc := range []string{"before", "factory"} {
		t.Run("always "+tc, func(t *testing.T) {
			sup := failures{errs: make(chan error, 16)}
			sys := testkit.NewSystem(t, testkit.WithGuardianStrategy(sup))
			var always atomic.Int32
			always.Store(1 << 30)
			pid := sys.Root().Spawn(actor.PropsFromFunc(echo, actor.WithInvokeMiddleware(func() scheduler.Middleware {
				if tc == "factory" {
					panic("factory")
				}
				return flakyMW{before: &always, after: new(atomic.Int32)}
			})))
			expectFailure(sup, tc)
			_, err := sys.Root().StopFuture(pid).ResultContext(ctx)
			require.NoError(t, err)
		})
	}
}

// limitMW caps every batch at limit user messages (MetaBatchLimit) and
// counts its invocations.
type limitMW struct {
	limit int
	calls *int
}

func (m limitMW) BeforeInvoke(ctx *scheduler.InvokeContext) scheduler.ControlFlow {
	*m.calls++
	ctx.Set(scheduler.MetaBatchLimit, m.limit)
	return scheduler.Continue
}

func (limitMW) AfterInvoke(*scheduler.InvokeContext, scheduler.InvokeResult) {}

// A batch limit of 0 (middleware.LimitBatch(ctx, 0), or a limit that
// reached 0) holds the user messages back as a Break does: the mailbox
// waits for its resume timer. Before, the invocation processed nothing and
// reported Yielded, so the executor ran it again at once, for ever: a
// worker spinning (the manual executor's RunUntilIdle never returned).
func TestBatchLimitZeroDoesNotSpin(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var calls int
	var got []string
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			got = append(got, s)
		}
	}, actor.WithInvokeMiddleware(func() scheduler.Middleware { return limitMW{limit: 0, calls: &calls} })))
	sys.Root().Send(pid, "held")
	for i := 0; sys.Step(); i++ {
		require.Less(t, i, 100, "the mailbox is run again and again")
	}
	require.Empty(t, got)
	require.LessOrEqual(t, calls, 2, "Started, then the held message")
	sys.Advance(scheduler.DefaultBreakResume)
	require.Empty(t, got, "still limited to 0")
}

// A WithInvokeMiddleware factory that returns nil adds nothing: the actor
// runs as without it (the scheduler's chain leaves nil members out).
func TestInvokeMiddlewareFactoryNil(t *testing.T) {
	sys := testkit.NewSystem(t)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	}, actor.WithInvokeMiddleware(func() scheduler.Middleware { return nil })))
	res, err := sys.Root().RequestFuture(pid, "ok", time.Second).Result()
	require.NoError(t, err)
	require.Equal(t, "ok", res)
}
