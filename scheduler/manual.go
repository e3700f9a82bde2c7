package scheduler

import (
	"sync"
	"time"
)

// Manual is a deterministic executor: nothing runs until the test calls
// RunOnce or RunUntilIdle, runnables run in the order they were scheduled,
// and resume timers use a ManualClock that moves only on Advance. It is the
// driver the testkit's deterministic mode is built on.
type Manual struct {
	mu         sync.Mutex
	queue      ring
	clock      *ManualClock
	throughput int
	onFailed   FailureHook
	timers     TimerSet
	trace      func(r Runnable, res InvokeResult)
	resumeF    func(Runnable)
	busyLimit  int       // SetBusyLimit; 0: none
	onBusy     func(int) // SetBusyLimit
	busy       bool      // the last run stopped at busyLimit
}

// ManualConfig configures a Manual executor.
type ManualConfig struct {
	// Clock is the virtual clock; nil means a new clock at the Unix epoch.
	Clock *ManualClock
	// Throughput is the hint handed to InvokeBatch; 0 means DefaultThroughput.
	Throughput int
	// OnFailed observes Failed results; may be nil.
	OnFailed FailureHook
	// Trace, when set, is called after every invocation with its result.
	Trace func(r Runnable, res InvokeResult)
}

// NewManual returns a manual executor.
func NewManual(cfg ManualConfig) *Manual {
	if cfg.Clock == nil {
		cfg.Clock = NewManualClock(time.Unix(0, 0).UTC())
	}
	if cfg.Throughput <= 0 {
		cfg.Throughput = DefaultThroughput
	}
	m := &Manual{clock: cfg.Clock, throughput: cfg.Throughput, onFailed: cfg.OnFailed, trace: cfg.Trace}
	m.resumeF = m.Schedule
	return m
}

// Clock returns the executor's virtual clock.
func (m *Manual) Clock() *ManualClock { return m.clock }

// Schedule implements Dispatcher.
func (m *Manual) Schedule(r Runnable) {
	m.mu.Lock()
	m.queue.push(r)
	m.mu.Unlock()
}

// ScheduleFrom implements Dispatcher; a manual executor has no workers, so it
// is Schedule.
func (m *Manual) ScheduleFrom(_ *Worker, r Runnable) { m.Schedule(r) }

// Pending returns the number of runnables waiting to run.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.queue.len()
}

// RunOnce runs one invocation of the runnable at the head of the queue and
// acts on its result. It reports false when nothing was ready. It is a run
// of its own: Busy reports false after it.
func (m *Manual) RunOnce() bool {
	// A single invocation never stops at the busy limit. Left set, Busy
	// told a driver that had just stepped the executor that it still stood
	// at the busy instant, and the testkit's probes, which run a busy
	// system again only once the test has run it, did not run it after a
	// Step (TestManualRunOnceEndsBusy, TestManualProbeRunsSystemAfterStep).
	m.busy = false
	return m.runOne()
}

// runOne is RunOnce without touching the busy state, for the loops of
// RunUntilIdle and Advance, which set it when they end.
func (m *Manual) runOne() bool {
	m.mu.Lock()
	r := m.queue.pop()
	m.mu.Unlock()
	if r == nil {
		return false
	}
	r.BindWorker(nil)
	res := r.InvokeBatch(m.throughput)
	if m.trace != nil {
		m.trace(r, res)
	}
	if settle(r, res, m.clock, m.resumeF, m.onFailed, &m.timers) == actRequeue {
		m.Schedule(r)
	}
	return true
}

// RunUntilIdle runs invocations until nothing is ready and returns how many
// ran. Timers do not fire: advance the clock for that.
func (m *Manual) RunUntilIdle() int {
	n, busy := m.run(m.budget(0))
	m.endRun(n, busy)
	return n
}

// budget returns the invocations a run may make at an instant where done
// have run: what the busy limit leaves, or -1 for no bound.
func (m *Manual) budget(done int) int {
	if m.busyLimit <= 0 {
		return -1
	}
	return max(m.busyLimit-done, 0)
}

// run runs invocations until nothing is ready or, with limit ≥ 0, until
// limit have run; busy reports that something was still ready then (an
// actor that keeps itself busy, a message to itself on every turn, would
// keep this loop, and the test driving it, running for ever). A system
// that needs exactly limit and is then idle is not busy: its RunUntilIdle
// passes, and its Advance reaches its target
// (TestManualBusyLimitExactlyReachedIsIdle).
func (m *Manual) run(limit int) (n int, busy bool) {
	for limit < 0 || n < limit {
		if !m.runOne() {
			return n, false
		}
		n++
	}
	return n, m.Pending() > 0
}

// endRun records how a run ended and reports a busy one to onBusy with
// the count of invocations.
func (m *Manual) endRun(n int, busy bool) {
	m.busy = busy
	if busy && m.onBusy != nil {
		m.onBusy(n)
	}
}

// SetBusyLimit bounds the invocations a run makes at one virtual instant
// to limit: one RunUntilIdle, and all the runs of an Advance at a deadline,
// the runs of deadlines that leave the clock where it is included (timers
// of zero delay armed again on every turn). When something is still ready
// once limit have run, the run stops, onBusy is called with the count and
// an Advance returns without going on to later deadlines, so a system
// that never becomes idle fails its test instead of hanging it; Busy then
// reports true. limit ≤ 0 removes the bound. Call it before driving the
// executor.
func (m *Manual) SetBusyLimit(limit int, onBusy func(n int)) {
	m.busyLimit, m.onBusy = max(limit, 0), onBusy
}

// Busy reports whether the last run (RunOnce, RunUntilIdle, Advance)
// stopped at the busy limit (SetBusyLimit) instead of finding the executor
// idle; only RunUntilIdle and Advance can, so it is false after a RunOnce,
// whatever is still ready then. Call it
// on the goroutine that drives the executor. A driver that advances the
// clock in steps of its own stops when it reports true: a step at the
// busy instant would run to the limit there again.
func (m *Manual) Busy() bool { return m.busy }

// Advance runs what is ready, then moves the virtual clock forward by d one
// timer deadline at a time: at each deadline it fires the due timers and
// runs until idle, so work happens at the virtual time it is due. It returns
// the invocations run. A negative d counts as 0. With a busy limit, it
// stops at the instant where the system did not become idle (Busy).
//
// The limit counts the invocations since the clock last moved, not those
// of each run: a timer of zero delay falls due at once, so a runnable that
// arms one on every run keeps the next deadline at now, and bounding each
// run alone let that Advance go on for ever at one instant
// (TestManualBusyLimitZeroDelayTimers). And an Advance that went on past a
// busy instant spent the limit again at every later deadline: a second of
// a millisecond timer beside a busy actor was a thousand times the limit
// (TestManualBusyLimitEndsAdvance).
func (m *Manual) Advance(d time.Duration) int {
	target := m.clock.Now().Add(max(d, 0))
	at := m.clock.Now()
	total, here := 0, 0 // here: invocations since the clock stood at at
	for last := false; ; {
		n, busy := m.run(m.budget(here))
		total, here = total+n, here+n
		if busy {
			m.endRun(here, true)
			return total
		}
		if last {
			m.busy = false
			return total
		}
		next, ok := m.clock.NextDeadline()
		if !ok || next.After(target) {
			next, last = target, true
		}
		m.clock.Advance(max(next.Sub(m.clock.Now()), 0))
		if now := m.clock.Now(); now.After(at) {
			at, here = now, 0
		}
	}
}

// PendingTimers returns the number of resume timers not yet fired.
func (m *Manual) PendingTimers() int { return m.timers.Len() }

// Shutdown stops pending resume timers. Queued runnables are left as they
// are. It is idempotent.
func (m *Manual) Shutdown() { m.timers.Close() }
