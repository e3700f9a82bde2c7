package actor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lifeProps reports, for Started and Stopped, the goroutine that ran it.
func lifeProps(started, stopped chan<- uint64) *Props {
	return PropsFromFunc(func(c Context) {
		switch c.Message().(type) {
		case *Started:
			started <- goid()
		case *Stopped:
			stopped <- goid()
		}
	})
}

// With the pool idle, Spawn followed by StopFuture(pid).Wait() runs the
// whole life (Started, the stop, Stopped) on the caller in one turn: no
// worker is woken.
func TestSpawnDeferredStopFutureRunsOnCaller(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	started, stopped := make(chan uint64, 1), make(chan uint64, 1)
	pid := sys.Root().Spawn(lifeProps(started, stopped))
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the start was deferred")
	f := sys.Root().StopFuture(pid)
	require.NoError(t, f.Wait())
	me := goid()
	assert.Equal(t, me, <-started, "Started ran on the caller")
	assert.Equal(t, me, <-stopped, "Stopped ran on the caller")
	assert.Nil(t, sys.deferred.Load())
	assert.Equal(t, 2, sys.coord.Parked(), "no worker woken")
	assert.Nil(t, f.done, "completed before Wait had to wait: no channel made")
}

// A deferred start that nobody joins still runs: the sweep hands it to
// the pool.
func TestSpawnDeferredNobodyWaits(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	sys.deferGrace = 20 * time.Millisecond // the sweep is what this tests
	started := make(chan uint64, 1)
	pid := sys.Root().Spawn(lifeProps(started, make(chan uint64, 1)))
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the start was deferred")
	assert.NotEqual(t, goid(), <-started, "ran on a worker")
}

// Any other operation of the root context hands a deferred start to the
// pool at once: a Send to the new actor is not held back until the sweep.
func TestSpawnDeferredReleasedBySend(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	got := make(chan uint64, 1)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			got <- goid()
		}
	}))
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the start was deferred")
	sys.Root().Send(pid, "hi")
	assert.Nil(t, sys.deferred.Load(), "Send released the deferred start")
	assert.NotEqual(t, goid(), <-got, "ran on a worker")
}

// A second spawn hands the first one's deferred start to the pool and
// does not defer its own, so a burst of spawns starts in parallel.
func TestSpawnDeferredReleasedBySpawn(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	first := sys.Root().Spawn(PropsFromFunc(func(Context) {}))
	require.Same(t, first.local.Load(), sys.deferred.Load())
	second := sys.Root().Spawn(PropsFromFunc(func(Context) {}))
	assert.Nil(t, sys.deferred.Load(), "the first start was released, the second not deferred")
	require.NoError(t, sys.Root().StopFuture(first).Wait())
	require.NoError(t, sys.Root().StopFuture(second).Wait())
}

// Two requests sent before either is awaited both go to the pool: the
// second hands the first's deferred turn to it instead of taking the slot,
// which would run the second on the caller only after the first answered.
// Each actor below answers only once the other has started, so deferring
// the second would hold the first until the sweep.
func TestRequestFutureDeferredSecondReleasesFirst(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pids := waitingPair(sys, func(int) any { return goid() })
	sys.releaseDeferred(nil)
	waitPoolIdle(t, sys)
	f0 := sys.Root().RequestFuture(pids[0], "go", 0)
	require.Same(t, pids[0].local.Load(), sys.deferred.Load(), "the first request was deferred")
	f1 := sys.Root().RequestFuture(pids[1], "go", 0)
	assert.Nil(t, sys.deferred.Load(), "the second released the first and was not deferred")
	me := goid()
	for _, f := range []*Future{f0, f1} {
		got, err := f.Result()
		require.NoError(t, err)
		assert.NotEqual(t, me, got, "ran on a worker")
	}
}

// Request to an actor whose start is deferred runs the start and the
// request on the caller, in one turn.
func TestSpawnDeferredRequestRunsOnCaller(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(whereProps())
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the start was deferred")
	got, err := Request[uint64](context.Background(), sys.Root(), pid, "where")
	require.NoError(t, err)
	assert.Equal(t, goid(), got)
	assert.Nil(t, sys.deferred.Load())
}

// RequestFuture to an actor whose start is deferred joins the turn, and
// Result runs both on the caller.
func TestSpawnDeferredRequestFutureJoins(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(whereProps())
	f := sys.Root().RequestFuture(pid, "where", 0)
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the request joined the deferred start")
	got, err := f.Result()
	require.NoError(t, err)
	assert.Equal(t, goid(), got)
}

// StopFuture of an idle actor defers the stop, and Wait runs it on the
// caller.
func TestStopFutureDeferredRunsOnCaller(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	started, stopped := make(chan uint64, 1), make(chan uint64, 1)
	pid := sys.Root().Spawn(lifeProps(started, stopped))
	sys.releaseDeferred(nil)
	<-started
	waitPoolIdle(t, sys)
	f := sys.Root().StopFuture(pid)
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the stop was deferred")
	require.NoError(t, f.Wait())
	assert.Equal(t, goid(), <-stopped)
}

// Shutdown does not wait for the sweep to stop an actor whose start is
// deferred, and the actor still starts and stops.
func TestSpawnDeferredShutdown(t *testing.T) {
	sys, err := NewSystem(SystemConfig{Workers: 2})
	require.NoError(t, err)
	waitPoolIdle(t, sys)
	started, stopped := make(chan uint64, 1), make(chan uint64, 1)
	pid := sys.Root().Spawn(lifeProps(started, stopped))
	require.Same(t, pid.local.Load(), sys.deferred.Load(), "the start was deferred")
	require.NoError(t, sys.Shutdown(context.Background()))
	<-started
	<-stopped
}
