package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/scheduler"
)

// blockUntilRan is an invocation that blocks its worker until target has
// run, as a Receive waiting for a request's answer does, and reports
// whether it did within the bound (a failure bound, not a wait: the
// answer is the event).
func blockUntilRan(ran <-chan struct{}, ok chan<- bool) {
	select {
	case <-ran:
		ok <- true
	case <-time.After(5 * time.Second):
		ok <- false
	}
}

// TestCoordinatorReleaseHandsHeldWorkToIdleWorkers: an invocation that
// schedules a runnable from its worker (the run-next slot) and then blocks
// until that runnable has run waits forever, with the other worker idle,
// unless it releases what its worker holds first (Worker.Release) and
// wakes an idle worker for it (WakeIdle), as a request's waiter does. The
// same holds for a runnable in the worker's local batch. Release alone
// wakes nobody: an invocation that does not block after all gets its
// runnables back on its own worker.
func TestCoordinatorReleaseHandsHeldWorkToIdleWorkers(t *testing.T) {
	t.Run("run-next slot", func(t *testing.T) {
		c := startCoordinator(t, scheduler.Config{Workers: 2})
		ran, ok := make(chan struct{}), make(chan bool, 1)
		target := &fakeRunnable{onInvoke: func(*fakeRunnable) { close(ran) }}
		c.Schedule(&fakeRunnable{onInvoke: func(f *fakeRunnable) {
			c.ScheduleFrom(f.worker, target)
			f.worker.Release()
			c.WakeIdle()
			blockUntilRan(ran, ok)
		}})
		assert.True(t, <-ok, "the runnable in the blocked worker's run-next slot did not run on the idle worker")
	})
	t.Run("local batch", func(t *testing.T) {
		c := startCoordinator(t, scheduler.Config{Workers: 2})
		ran, ok := make(chan struct{}), make(chan bool, 1)
		target := &fakeRunnable{onInvoke: func(*fakeRunnable) { close(ran) }}
		blocker := &fakeRunnable{onInvoke: func(f *fakeRunnable) {
			f.worker.Release()
			c.WakeIdle()
			blockUntilRan(ran, ok)
		}}
		// Four queued at once: the first worker to take gets a fair share
		// of two, the blocker and the target behind it in its local batch.
		c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) {
			c.Schedule(blocker)
			c.Schedule(target)
			c.Schedule(&fakeRunnable{})
			c.Schedule(&fakeRunnable{})
		}})
		assert.True(t, <-ok, "the runnable in the blocked worker's local batch did not run on the idle worker")
	})
	t.Run("not blocking after all", func(t *testing.T) {
		c := startCoordinator(t, scheduler.Config{Workers: 2})
		waitParked(t, c, 2)
		ran := make(chan *scheduler.Worker, 1)
		target := &fakeRunnable{onInvoke: func(f *fakeRunnable) { ran <- f.worker }}
		var releasedOn *scheduler.Worker
		c.Schedule(&fakeRunnable{onInvoke: func(f *fakeRunnable) {
			releasedOn = f.worker
			c.ScheduleFrom(f.worker, target)
			f.worker.Release()
		}})
		assert.Same(t, releasedOn, <-ran, "Release woke another worker for what it handed over")
	})
	t.Run("nothing held", func(t *testing.T) {
		c := startCoordinator(t, scheduler.Config{Workers: 1})
		done := make(chan struct{})
		c.Schedule(&fakeRunnable{onInvoke: func(f *fakeRunnable) { f.worker.Release(); close(done) }})
		<-done
		var nilWorker *scheduler.Worker
		nilWorker.Release() // a caller turn's: a no-op
		c.WakeIdle()        // nothing queued: wakes nobody
		waitParked(t, c, 1)
		assert.Equal(t, 0, c.Queued())
	})
}
