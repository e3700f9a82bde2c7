package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/scheduler"
)

// TestReview11NoStarvationWhileAWorkerRunsItsLocalBatch showed a false
// report of the starvation watch (330250b). Its contract (Starved, the
// actor.PoolStarved doc, the Warn text "every worker stayed in one
// invocation while actors waited; a Receive that blocks holds its
// worker") is a pool whose workers are stuck in one invocation each. But
// the watch counts only takes from the ready queue: a worker that runs
// the runnables of its local batch (up to MaxBatch, default 32) one after
// the other takes nothing from the queue meanwhile, so a pool that is
// merely saturated (here one worker, eight runnables of 300 ms each taken
// in one batch, none blocked) is reported starved, and the operator is
// sent looking for a blocked Receive that does not exist. (The four
// runnables left in the queue did wait that long: what is wrong is the
// diagnosis, not that the queue stood still.)
//
// Fixed on 2026-11-25 (the test failed before). Suggested then: count a runnable a worker starts from its slot or local
// batch as the queue moving too (a per-worker atomic counter the watch
// sums; measure the per-hop cost), or, cheaper, make Starved, PoolStarved
// and the log say what the watch sees: no worker took from the ready
// queue for StarvedAfter (workers blocked, or busy with long invocations
// or full batches); this test then goes.
func TestReview11NoStarvationWhileAWorkerRunsItsLocalBatch(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	starved := make(chan scheduler.Starved, 4)
	c := startCoordinator(t, scheduler.Config{Name: "busy", Workers: 1, MaxBatch: 8, Clock: clock,
		StarvedAfter: time.Second, OnStarved: func(s scheduler.Starved) { starved <- s }})
	waitParked(t, c, 1) // the gate's Schedule wakes it, arming nothing
	running, open := make(chan struct{}), make(chan struct{})
	c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(running); <-open }})
	<-running
	const n = 12
	done := make(chan struct{}, n)
	for range n { // the first finds no parked worker: the watch arms
		c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) {
			clock.Advance(300 * time.Millisecond) // 300 ms of work, well under StarvedAfter
			done <- struct{}{}
		}})
	}
	close(open) // the worker takes 8 in one batch, runs them, then takes the last 4
	for range n {
		<-done
	}
	waitParked(t, c, 1)
	select {
	case s := <-starved:
		t.Errorf("reported starved with no invocation longer than 300 ms: %+v", s)
	default:
	}
	assert.Zero(t, c.Queued())
}
