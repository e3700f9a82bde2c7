package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// TestCoordinatorReportsStarvation: with the only worker blocked in an
// invocation and a runnable waiting in the queue, OnStarved hears of it
// once the queue has stood still for StarvedAfter, once per episode; when
// the worker takes from the queue again the episode ends, and the watch
// disarms once the queue is empty (no timer is left set).
func TestCoordinatorReportsStarvation(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	starved := make(chan scheduler.Starved, 4)
	c := startCoordinator(t, scheduler.Config{Name: "shared", Workers: 1, Clock: clock,
		StarvedAfter: time.Second, OnStarved: func(s scheduler.Starved) { starved <- s }})
	waitParked(t, c, 1) // else the first Schedule arms the watch, finding no parked worker
	running, unblock := make(chan struct{}), make(chan struct{})
	c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(running); <-unblock }})
	<-running
	ran := make(chan struct{})
	c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(ran) }})
	require.Equal(t, 1, c.PendingTimers(), "a Schedule that found no parked worker did not arm the watch")

	clock.Advance(999 * time.Millisecond)
	assert.Empty(t, starved, "reported before StarvedAfter")
	clock.Advance(time.Millisecond)
	require.Len(t, starved, 1, "not reported once the queue stood still for StarvedAfter")
	s := <-starved
	assert.Equal(t, scheduler.Starved{Pool: "shared", Workers: 1, Waiting: 1, For: time.Second}, s)
	clock.Advance(time.Second)
	assert.Empty(t, starved, "the same episode was reported twice")

	close(unblock)
	<-ran
	waitParked(t, c, 1)
	clock.Advance(time.Second) // the watch sees the queue empty and disarms
	assert.Empty(t, starved)
	assert.Equal(t, 0, c.PendingTimers(), "the watch stayed armed on an empty queue")
}

// TestCoordinatorNoStarvationWhileTheQueueMoves: a busy pool whose
// workers keep taking from the queue is not starved, however long the
// queue stays non-empty.
func TestCoordinatorNoStarvationWhileTheQueueMoves(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	starved := make(chan scheduler.Starved, 1)
	c := startCoordinator(t, scheduler.Config{Workers: 1, Clock: clock, MaxBatch: 1,
		StarvedAfter: time.Second, OnStarved: func(s scheduler.Starved) { starved <- s }})
	step, started := make(chan struct{}), make(chan struct{}, 1)
	var chain func(int) *fakeRunnable
	chain = func(n int) *fakeRunnable {
		return &fakeRunnable{onInvoke: func(*fakeRunnable) {
			select { // the test takes each while it steps; none after
			case started <- struct{}{}:
			default:
			}
			<-step // one runnable per step: the queue moves between two looks
			if n > 0 {
				c.Schedule(chain(n - 1))
			}
		}}
	}
	c.Schedule(chain(10))
	c.Schedule(chain(10)) // two chains: the queue is never empty
	<-started
	for range 8 {
		step <- struct{}{}
		<-started // the worker has taken the next one from the queue
		clock.Advance(time.Second)
	}
	assert.Empty(t, starved)
	close(step)
	waitParked(t, c, 1)
}

// TestCoordinatorWatchWakesForReleasedWork: an invocation that released
// what its worker held (Release, which wakes nobody) and then blocks on
// something other than a future (a channel) leaves runnables in the queue
// with the other worker parked. The watch wakes that worker at its next
// look instead of reporting starvation: the runnable runs a StarvedAfter
// late, not after the block.
func TestCoordinatorWatchWakesForReleasedWork(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	starved := make(chan scheduler.Starved, 1)
	c := startCoordinator(t, scheduler.Config{Workers: 2, Clock: clock,
		StarvedAfter: time.Second, OnStarved: func(s scheduler.Starved) { starved <- s }})
	waitParked(t, c, 2)
	ran, blocked, unblock := make(chan struct{}), make(chan struct{}), make(chan struct{})
	target := &fakeRunnable{onInvoke: func(*fakeRunnable) { close(ran) }}
	c.Schedule(&fakeRunnable{onInvoke: func(f *fakeRunnable) {
		c.ScheduleFrom(f.worker, target)
		f.worker.Release()
		close(blocked)
		<-unblock
	}})
	<-blocked
	waitParked(t, c, 1)
	select {
	case <-ran:
		t.Fatal("the released runnable ran before anything woke a worker")
	default:
	}
	clock.Advance(time.Second)
	select {
	case <-ran:
	case <-time.After(10 * time.Second): // a failure bound: the wake is synchronous with Advance
		t.Fatal("the released runnable did not run after the watch's look, a worker parked")
	}
	assert.Empty(t, starved, "reported starvation with a worker parked")
	close(unblock)
}
