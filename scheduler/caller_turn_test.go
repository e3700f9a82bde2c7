package scheduler_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// With every worker parked, a caller may run a turn itself: it runs on the
// calling goroutine, once, with no worker bound.
func TestCallerTurnWhenIdle(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 2})
	waitParked(t, c, 2)
	r := &fakeRunnable{}
	require.True(t, c.BeginCallerTurn())
	c.RunCallerTurn(r)
	c.EndCallerTurn()
	assert.Equal(t, int64(1), r.runs.Load(), "ran before RunCallerTurn returned")
	assert.Nil(t, r.worker, "a caller turn has no worker: what it schedules goes to the pool")
	assert.Equal(t, int64(1), r.idles.Load(), "settled like a worker's turn")
	assert.Equal(t, 2, c.Parked(), "no worker woken")
}

// Not before Start: the pool's workers are not counted yet.
func TestCallerTurnNotBeforeStart(t *testing.T) {
	c := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
	assert.False(t, c.BeginCallerTurn())
	require.NoError(t, c.Shutdown(context.Background()))
}

// While a worker of any pool runs, callers do not run turns: the pool's
// parallelism holds.
func TestCallerTurnRefusedWhileWorkerBusy(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 2})
	other := startCoordinator(t, scheduler.Config{Workers: 1})
	waitParked(t, c, 2)
	waitParked(t, other, 1)
	running, release := make(chan struct{}), make(chan struct{})
	other.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(running); <-release }})
	<-running
	assert.False(t, c.BeginCallerTurn(), "a worker of another pool is running")
	close(release)
	waitParked(t, other, 1)
	require.True(t, c.BeginCallerTurn())
	c.EndCallerTurn()
}

// A turn running on a caller never starts another, in its own pool or any
// other, so the caller's stack holds at most one turn.
func TestCallerTurnNeverNested(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 1})
	other := startCoordinator(t, scheduler.Config{Workers: 1})
	waitParked(t, c, 1)
	waitParked(t, other, 1)
	var nestedSame, nestedOther bool
	r := &fakeRunnable{onInvoke: func(*fakeRunnable) {
		nestedSame = c.BeginCallerTurn()
		nestedOther = other.BeginCallerTurn()
	}}
	require.True(t, c.BeginCallerTurn())
	c.RunCallerTurn(r)
	c.EndCallerTurn()
	assert.False(t, nestedSame)
	assert.False(t, nestedOther)
	require.True(t, c.BeginCallerTurn(), "allowed again once the turn ended")
	c.EndCallerTurn()
}

// A caller turn is one invocation: a runnable that yields, or that got work
// meanwhile, continues on the pool.
func TestCallerTurnHandsRestToPool(t *testing.T) {
	for _, tc := range []struct {
		name string
		r    func() *fakeRunnable
	}{
		{"yielded", func() *fakeRunnable {
			return &fakeRunnable{script: []scheduler.InvokeResult{scheduler.Yielded()}}
		}},
		{"work arrived", func() *fakeRunnable {
			r := &fakeRunnable{}
			r.pending.Store(true) // SetIdle re-claims it
			return r
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := startCoordinator(t, scheduler.Config{Workers: 1})
			waitParked(t, c, 1)
			r := tc.r()
			second := make(chan *scheduler.Worker, 1)
			r.onInvoke = func(f *fakeRunnable) {
				if f.runs.Load() == 2 {
					second <- f.worker
				}
			}
			require.True(t, c.BeginCallerTurn())
			c.RunCallerTurn(r)
			c.EndCallerTurn()
			assert.NotNil(t, <-second, "the second invocation ran on a worker")
		})
	}
}

// Shutdown waits for a caller turn in progress, and none begins after it.
func TestCallerTurnShutdownWaits(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 1})
	waitParked(t, c, 1)
	require.True(t, c.BeginCallerTurn())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.ErrorIs(t, c.Shutdown(ctx), context.Canceled, "still waiting for the caller turn")
	assert.False(t, c.BeginCallerTurn(), "closed")
	c.EndCallerTurn()
	require.NoError(t, c.Shutdown(context.Background()))
}
