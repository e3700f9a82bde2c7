package scheduler_test

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// endedCtx returns a context that has already ended.
func endedCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestCoordinatorShutdownEndedCtxReportsOnlyUnfinished: Shutdown with a
// context that has already ended reports the pool unfinished only when
// work is still running on it. Before, a pool that had finished was
// reported unfinished half of the time (a select picks at random between
// the done channel and the ended context), and a pool whose workers were
// all parked nearly every time: they had been woken to exit but had not
// returned yet at that instant.
func TestCoordinatorShutdownEndedCtxReportsOnlyUnfinished(t *testing.T) {
	t.Run("finished_before", func(t *testing.T) {
		c := scheduler.NewCoordinator(scheduler.Config{Workers: 2})
		c.Start()
		require.NoError(t, c.Shutdown(context.Background()))
		for range 64 { // a coin flip each before
			require.NoError(t, c.Shutdown(endedCtx()))
		}
	})
	t.Run("never_started", func(t *testing.T) {
		for range 64 {
			c := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
			require.NoError(t, c.Shutdown(endedCtx()))
		}
	})
	t.Run("all_parked", func(t *testing.T) {
		for range 16 {
			c := scheduler.NewCoordinator(scheduler.Config{Workers: 2})
			c.Start()
			waitParked(t, c, 2)
			require.NoError(t, c.Shutdown(endedCtx()), "parked workers run nothing more: the pool has finished")
			require.NoError(t, c.Shutdown(context.Background()))
			assert.Equal(t, 0, c.Parked())
		}
	})
	t.Run("worker_running_reported", func(t *testing.T) {
		c := scheduler.NewCoordinator(scheduler.Config{Workers: 2})
		c.Start()
		running, release := make(chan struct{}), make(chan struct{})
		c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(running); <-release }})
		<-running
		require.ErrorIs(t, c.Shutdown(endedCtx()), context.Canceled)
		close(release)
		require.NoError(t, c.Shutdown(context.Background()))
	})
	t.Run("caller_turn_reported", func(t *testing.T) {
		c := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
		c.Start()
		waitParked(t, c, 1)
		require.True(t, c.BeginCallerTurn())
		require.ErrorIs(t, c.Shutdown(endedCtx()), context.Canceled, "a caller turn is still running")
		c.EndCallerTurn()
		require.NoError(t, c.Shutdown(context.Background()))
	})
}

// TestCoordinatorShutdownWaitsForCallerTurns: Shutdown returns only after
// the caller turn in progress has ended, and at once when none runs, one
// having ended before (caller_turn.go counts them without a WaitGroup
// count per turn).
func TestCoordinatorShutdownWaitsForCallerTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
		c.Start()
		synctest.Wait() // the worker has parked
		require.True(t, c.BeginCallerTurn())
		c.EndCallerTurn()
		require.True(t, c.BeginCallerTurn())
		returned := make(chan error, 1)
		go func() { returned <- c.Shutdown(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-returned:
			t.Fatalf("Shutdown returned (%v) while a caller turn ran", err)
		default:
		}
		c.EndCallerTurn()
		require.NoError(t, <-returned)
	})
	synctest.Test(t, func(t *testing.T) {
		c := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
		c.Start()
		synctest.Wait()
		require.True(t, c.BeginCallerTurn())
		c.EndCallerTurn()
		require.NoError(t, c.Shutdown(context.Background()), "no turn runs")
	})
}

// TestCoordinatorShutdownRunsWhatRunningWorkersSchedule: what a worker
// still running after Shutdown schedules (a stopping actor's notice to its
// parent, the parent's stop of its other children) runs before the pool's
// last worker exits, through the ready queue as well as through the
// run-next slot. Before, Shutdown dropped whatever reached the ready queue
// from then on, and an actor tree whose stop outlived Shutdown's context
// was left half stopped. Once every worker has exited, a schedule is
// dropped: nothing would ever run it.
func TestCoordinatorShutdownRunsWhatRunningWorkersSchedule(t *testing.T) {
	c := scheduler.NewCoordinator(scheduler.Config{Workers: 2})
	c.Start()
	queued, slot, moved := &fakeRunnable{}, &fakeRunnable{}, &fakeRunnable{}
	running, release := make(chan struct{}), make(chan struct{})
	c.Schedule(&fakeRunnable{onInvoke: func(f *fakeRunnable) {
		close(running)
		<-release
		c.Schedule(queued)
		c.ScheduleFrom(f.worker, moved)
		c.ScheduleFrom(f.worker, slot) // moves moved to the ready queue
	}})
	<-running
	require.ErrorIs(t, c.Shutdown(endedCtx()), context.Canceled)
	close(release)
	require.NoError(t, c.Shutdown(context.Background()))
	assert.Equal(t, int64(1), queued.runs.Load(), "scheduled to the ready queue")
	assert.Equal(t, int64(1), moved.runs.Load(), "moved from the run-next slot to the ready queue")
	assert.Equal(t, int64(1), slot.runs.Load(), "run next")

	late := &fakeRunnable{}
	c.Schedule(late)
	assert.Equal(t, 0, c.Queued(), "dropped: every worker has exited")
	assert.Equal(t, int64(0), late.runs.Load())
}
