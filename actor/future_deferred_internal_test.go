package actor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// With the pool idle, RequestFuture(...).Result() (and Wait) run the
// target's turn on the caller, with or without a timeout.
func TestRequestFutureDeferredResultRunsOnCaller(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(whereProps())
	for _, timeout := range []time.Duration{0, 5 * time.Second} {
		waitPoolIdle(t, sys)
		got, err := sys.Root().RequestFuture(pid, "where", timeout).Result()
		require.NoError(t, err)
		assert.Equal(t, goid(), got, "timeout %v", timeout)
	}
	waitPoolIdle(t, sys)
	f := sys.Root().RequestFuture(pid, "where", 0)
	require.NoError(t, f.Wait())
	assert.Equal(t, goid(), f.result)
	select {
	case <-f.Done(): // made after the completion: closed
	default:
		t.Fatal("Done of a completed future is not closed")
	}
}

// A deferred request nobody waits for still runs: the sweep hands it to
// the pool.
func TestRequestFutureDeferredNobodyWaits(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	sys.deferGrace = 20 * time.Millisecond // the sweep is what this tests
	ran := make(chan uint64, 1)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			ran <- goid()
		}
	}))
	waitPoolIdle(t, sys)
	sys.Root().RequestFuture(pid, "go", 0)
	assert.NotEqual(t, goid(), <-ran, "ran on a worker")
}

// Requests sent before their answers are awaited run in parallel: each
// actor below waits until the other has started.
func TestRequestFutureDeferredScatterGather(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pids := waitingPair(sys, func(i int) any { return i })
	waitPoolIdle(t, sys)
	fs := []*Future{sys.Root().RequestFuture(pids[0], "go", 0), sys.Root().RequestFuture(pids[1], "go", 0)}
	for i, f := range fs {
		got, err := f.Result()
		require.NoError(t, err)
		assert.Equal(t, i, got)
	}
}

// Done hands a deferred turn to the pool: a caller that selects on it is
// not left waiting for the sweep, and the turn runs on a worker.
func TestRequestFutureDeferredDoneUsesPool(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(whereProps())
	waitPoolIdle(t, sys)
	f := sys.Root().RequestFuture(pid, "where", 0)
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the turn was deferred")
	<-f.Done()
	assert.NotEqual(t, goid(), f.result)
}

// A deferred request keeps its timeout.
func TestRequestFutureDeferredTimeout(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(PropsFromFunc(func(Context) {})) // never answers
	waitPoolIdle(t, sys)
	f := sys.Root().RequestFuture(pid, "ignored", time.Millisecond)
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the turn was deferred")
	_, err := f.Result()
	assert.ErrorIs(t, err, ErrTimeout)
}

// ResultContext with an ended context does not run the turn on the caller.
func TestRequestFutureDeferredEndedContext(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	ran := make(chan uint64, 1)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			ran <- goid()
		}
	}))
	waitPoolIdle(t, sys)
	f := sys.Root().RequestFuture(pid, "go", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := f.ResultContext(ctx)
	assert.ErrorIs(t, err, ErrTimeout)
	assert.NotEqual(t, goid(), <-ran)
}

// A RequestFuture answered on a caller turn allocates the Future only: its
// done channel is made only for a waiter that has to wait.
func TestRequestFutureDeferredAllocs(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(int); ok {
			c.Respond(c.Message())
		}
	}))
	waitPoolIdle(t, sys)
	msg := any(1)
	allocs := leastAllocs(1000, 1, func() {
		if _, err := sys.Root().RequestFuture(pid, msg, 5*time.Second).Result(); err != nil {
			t.Fatal(err)
		}
	})
	assert.LessOrEqual(t, allocs, 1.0)
}

// waitingPair spawns two actors that answer a string with answer(i), i
// being the actor's index, each only once the other has received its
// string: their requests finish only if they run in parallel.
func waitingPair(sys *System, answer func(i int) any) [2]*PID {
	started := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	var pids [2]*PID
	for i := range pids {
		pids[i] = sys.Root().Spawn(PropsFromFunc(func(c Context) {
			if _, ok := c.Message().(string); ok {
				close(started[i])
				<-started[1-i]
				c.Respond(answer(i))
			}
		}))
	}
	return pids
}
