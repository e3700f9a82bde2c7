package scheduler_test

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

func startCoordinator(t *testing.T, cfg scheduler.Config) *scheduler.Coordinator {
	t.Helper()
	c := scheduler.NewCoordinator(cfg)
	c.Start()
	t.Cleanup(func() { require.NoError(t, c.Shutdown(context.Background())) })
	return c
}

func waitParked(t *testing.T, c *scheduler.Coordinator, n int) {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for c.Parked() != n {
		select {
		case <-deadline.C:
			t.Fatalf("parked=%d, want %d", c.Parked(), n)
		case <-tick.C:
		}
	}
}

// Idle workers park: with nothing to do, every worker is parked, and a
// schedule wakes one that runs the runnable.
func TestCoordinatorParksAndWakes(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 2})
	waitParked(t, c, 2)
	done := make(chan struct{})
	r := &fakeRunnable{onInvoke: func(*fakeRunnable) { close(done) }}
	c.Schedule(r)
	<-done
	waitParked(t, c, 2)
	assert.Equal(t, int64(1), r.runs.Load())
	assert.NotNil(t, r.worker, "bound to the worker that ran it")
}

// A runnable scheduled from inside an invocation on worker w runs next on w.
func TestCoordinatorRunNextOnSameWorker(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 2})
	var wg sync.WaitGroup
	wg.Add(1)
	second := &fakeRunnable{onInvoke: func(*fakeRunnable) { wg.Done() }}
	var firstWorker *scheduler.Worker
	first := &fakeRunnable{}
	first.onInvoke = func(f *fakeRunnable) {
		firstWorker = f.worker
		c.ScheduleFrom(f.worker, second)
	}
	c.Schedule(first)
	wg.Wait()
	assert.Same(t, firstWorker, second.worker)
}

// S10 integration: many runnables, each scheduled many times, all run; a
// runnable is never run by two workers at once.
func TestCoordinatorManyRunnables(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 4, MaxBatch: 8})
	const n, rounds = 100, 200
	var total atomic.Int64
	var wg sync.WaitGroup
	wg.Add(n * rounds)
	rs := make([]*fakeRunnable, n)
	finished := make([]atomic.Int64, n)
	for i := range rs {
		var busy atomic.Bool
		rs[i] = &fakeRunnable{idx: scheduler.MailboxIndex(i), onInvoke: func(*fakeRunnable) {
			if !busy.CompareAndSwap(false, true) {
				t.Error("runnable invoked concurrently")
			}
			total.Add(1)
			busy.Store(false)
			finished[i].Add(1)
			wg.Done()
		}}
	}
	for k := 0; k < rounds; k++ {
		for i, r := range rs {
			// Schedule only after the previous run finished: the mailbox
			// status protocol guarantees one schedule per idle transition.
			for finished[i].Load() < int64(k) {
				runtimeGosched()
			}
			c.Schedule(r)
		}
	}
	wg.Wait()
	assert.Equal(t, int64(n*rounds), total.Load())
}

// A suspended runnable resumes after its delay on the coordinator's clock.
func TestCoordinatorResumeTimer(t *testing.T) {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	c := startCoordinator(t, scheduler.Config{Workers: 1, Clock: clock})
	resumed := make(chan struct{})
	r := &fakeRunnable{script: []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(time.Second))}}
	r.onInvoke = func(f *fakeRunnable) {
		if f.runs.Load() == 2 {
			close(resumed)
		}
	}
	c.Schedule(r)
	waitTimers(t, c, 1)
	clock.Advance(time.Second)
	<-resumed
}

func waitTimers(t *testing.T, c *scheduler.Coordinator, n int) {
	t.Helper()
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Microsecond)
	defer tick.Stop()
	for c.PendingTimers() != n {
		select {
		case <-deadline.C:
			t.Fatalf("timers=%d, want %d", c.PendingTimers(), n)
		case <-tick.C:
		}
	}
}

func TestCoordinatorShutdownIdempotent(t *testing.T) {
	c := scheduler.NewCoordinator(scheduler.Config{Workers: 2})
	c.Start()
	require.NoError(t, c.Shutdown(context.Background()))
	require.NoError(t, c.Shutdown(context.Background()))
	c.Schedule(&fakeRunnable{}) // dropped, no panic
	never := scheduler.NewCoordinator(scheduler.Config{})
	require.NoError(t, never.Shutdown(context.Background()))
}

// A ping-pong pair in the run-next slot does not starve what the same worker
// took into its local batch: after maxStreak turns in a row the pair goes to
// the ready queue and the local batch runs. One worker, so the runnable
// taken alongside the pair can only run on it.
func TestCoordinatorRunNextDoesNotStarveLocalBatch(t *testing.T) {
	c := startCoordinator(t, scheduler.Config{Workers: 1})
	const rounds = 1000
	done := make(chan struct{})
	var turns, otherAt int64 // written on the one worker only
	otherAt = -1
	p, q := &fakeRunnable{}, &fakeRunnable{}
	pingPong := func(peer *fakeRunnable) func(*fakeRunnable) {
		return func(f *fakeRunnable) {
			turns++
			if turns == rounds {
				close(done)
				return
			}
			c.ScheduleFrom(f.worker, peer)
		}
	}
	p.onInvoke, q.onInvoke = pingPong(q), pingPong(p)
	other := &fakeRunnable{onInvoke: func(*fakeRunnable) { otherAt = turns }}
	// Scheduled from a turn, so the worker finds both in the queue at once
	// and takes other into its local batch behind p.
	c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { c.Schedule(p); c.Schedule(other) }})
	<-done
	waitParked(t, c, 1)
	assert.Equal(t, int64(1), other.runs.Load())
	assert.LessOrEqual(t, otherAt, int64(2*64), "the local batch waited for the whole ping-pong (%d turns)", otherAt)
}

// TestCoordinatorHugeWorkers: a pool size past MaxWorkersCap is capped, not
// allocated.
func TestCoordinatorHugeWorkers(t *testing.T) {
	c := scheduler.NewCoordinator(scheduler.Config{Workers: scheduler.MaxWorkersCap + 1})
	require.Equal(t, scheduler.MaxWorkersCap, c.Config().Workers)
	require.NoError(t, c.Shutdown(context.Background()))
}

// Bad sizes in Config do not panic: non-positive values take the defaults
// and a huge MaxBatch (which made NewCoordinator panic in makeslice) is
// capped; the pool runs.
func TestCoordinatorHugeMaxBatch(t *testing.T) {
	for _, cfg := range []scheduler.Config{
		{Workers: 1, MaxBatch: math.MaxInt},
		{Workers: -1, Throughput: -1, MaxBatch: -1},
	} {
		var c *scheduler.Coordinator
		require.NotPanics(t, func() { c = scheduler.NewCoordinator(cfg) })
		got := c.Config()
		assert.Positive(t, got.Workers)
		assert.Equal(t, scheduler.DefaultThroughput, got.Throughput)
		assert.LessOrEqual(t, got.MaxBatch, scheduler.MaxBatchCap)
		assert.Positive(t, got.MaxBatch)
		c.Start()
		done := make(chan struct{})
		c.Schedule(&fakeRunnable{onInvoke: func(*fakeRunnable) { close(done) }})
		<-done
		require.NoError(t, c.Shutdown(context.Background()))
	}
}
