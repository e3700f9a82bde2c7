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
// acts on its result. It reports false when nothing was ready.
func (m *Manual) RunOnce() bool {
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
	n := 0
	for m.RunOnce() {
		n++
		if m.busyLimit > 0 && n >= m.busyLimit {
			// Never idle: an actor that keeps itself busy (a message to
			// itself on every turn) would keep this loop, and the test
			// driving it, running for ever.
			if m.onBusy != nil {
				m.onBusy(n)
			}
			return n
		}
	}
	return n
}

// SetBusyLimit bounds one RunUntilIdle (and each run of Advance) to limit
// invocations: past it the run stops and onBusy is called with the count,
// so a system that never becomes idle fails its test instead of hanging
// it. limit ≤ 0 removes the bound. Call it before driving the executor.
func (m *Manual) SetBusyLimit(limit int, onBusy func(n int)) {
	m.busyLimit, m.onBusy = max(limit, 0), onBusy
}

// Advance runs what is ready, then moves the virtual clock forward by d one
// timer deadline at a time: at each deadline it fires the due timers and
// runs until idle, so work happens at the virtual time it is due. It returns
// the invocations run. A negative d counts as 0.
func (m *Manual) Advance(d time.Duration) int {
	n := m.RunUntilIdle()
	target := m.clock.Now().Add(max(d, 0))
	for {
		next, ok := m.clock.NextDeadline()
		if !ok || next.After(target) {
			break
		}
		m.clock.Advance(max(next.Sub(m.clock.Now()), 0))
		n += m.RunUntilIdle()
	}
	m.clock.Advance(target.Sub(m.clock.Now()))
	return n + m.RunUntilIdle()
}

// PendingTimers returns the number of resume timers not yet fired.
func (m *Manual) PendingTimers() int { return m.timers.Len() }

// Shutdown stops pending resume timers. Queued runnables are left as they
// are. It is idempotent.
func (m *Manual) Shutdown() { m.timers.Close() }
