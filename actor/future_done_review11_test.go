package actor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestReview11RequestFutureDoneFromReceiveDoesNotStrandTheTarget shows a
// gap in 27ebdac: a Receive that makes a RequestFuture and waits on the
// future's Done channel in a select (the Go idiom for a wait with a way
// out: a context, a stop channel) still waits out its own bound, the
// other worker parked. RequestFuture's Release has moved the target from
// the worker's run-next slot to the ready queue without a wake (by
// design: a continuation may follow), and only Result, Wait,
// ResultContext and Request wake a parked worker (WakeIdle); Done does
// not, though it already hands a root request's deferred turn to the pool
// for the same reason (a caller that selects on it must not be left
// waiting). The target runs only when some other Schedule happens to wake
// a worker.
//
// Fixed on 2026-11-25 (the test failed before). Suggested then: Done calls f.sys.coord.WakeIdle() when f has a system
// and is pending (three atomic loads when nothing waits in the queue).
func TestReview11RequestFutureDoneFromReceiveDoesNotStrandTheTarget(t *testing.T) {
	sys, err := NewSystem(SystemConfig{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	target := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if c.Message() == "ping" {
			c.Respond("pong")
		}
	}))
	out := make(chan error, 1)
	asker := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if c.Message() == "go" {
			f := c.RequestFuture(target, "ping", 0)
			select {
			case <-f.Done():
				_, err := f.Result()
				out <- err
			case <-time.After(3 * time.Second): // the failure bound: the answer is the event
				out <- context.DeadlineExceeded
			}
		}
	}))
	_, err = Request[string](context.Background(), sys.Root(), target, "ping") // started
	require.NoError(t, err)
	waitPoolIdle(t, sys)         // both workers parked: only a wake runs the target
	sys.Root().Send(asker, "go") // sent, not requested: the asker's turn runs on a worker
	require.NoError(t, <-out, "the target stayed in the ready queue, the other worker parked")
}
