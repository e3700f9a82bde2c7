package testkit

import (
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// ManualSystem is a system in deterministic mode: its dispatcher is the
// manual executor (scheduler.Manual) and its clock a virtual one
// (scheduler.ManualClock) that stands at the Unix epoch when the system
// starts. Nothing runs until the test calls Step, RunUntilIdle or Advance
// (or an expectation of a probe, which runs the system until idle), and
// time moves only on Advance, so a scenario gives the same Trace on every
// run. PIDs are generated from a per-system counter, so they are the same
// on every run too.
//
// Everything runs on the goroutine that drives the system, normally the
// test goroutine. The EventStream still delivers on goroutines of its own;
// EventProbe waits for them.
type ManualSystem struct {
	*actor.System
	Exec  *scheduler.Manual
	Clock *scheduler.ManualClock
	trace *traceLog
}

// TraceEntry is one invocation in deterministic mode: the virtual time
// since the system started, the actor (nil for runnables that are not
// actors) and the result.
type TraceEntry struct {
	At     time.Duration
	PID    *actor.PID
	Result scheduler.InvokeResult
}

// String renders the entry for comparison and for failure output:
// "100ms $2 Failed{actor: panic in Receive: boom, RetryAfter:100ms}".
func (e TraceEntry) String() string {
	who := "<runnable>"
	if e.PID != nil {
		who = e.PID.ID
	}
	return e.At.String() + " " + who + " " + e.Result.String()
}

type traceLog struct {
	mu      sync.Mutex
	entries []TraceEntry
}

// ManualBusyLimit is the most invocations a ManualSystem makes at one
// virtual instant (one RunUntilIdle; the runs of an Advance or a probe's
// wait at one deadline) before it reports the system as never idle (an
// Errorf on the test) and returns; an Advance or a probe's wait then
// returns at that instant, and the probes' waits that follow do not run
// the system until the test runs it (Step, RunUntilIdle, Advance).
const ManualBusyLimit = 1 << 18

// NewManualSystem starts a deterministic system for one test; options as
// for NewSystem (SystemConfig.Throughput is handed to the executor; the
// Dispatcher and Clock fields are the testkit's, and DeterministicIDs is
// set, so generated IDs read "$1", "$2", ... in every run). At cleanup the system is
// shut down (the shutdown drives the executor), checked for leaks as in
// NewSystem, and the executor's timers are stopped.
//
// Probes and event probes made on it run it until idle before they look, and
// read their timeouts as virtual time: ExpectMsg(p, time.Second) advances the
// clock, one timer deadline at a time, until a message arrives or a second
// has passed. A timeout of 0 never moves the clock.
func NewManualSystem(t testing.TB, opts ...Option) *ManualSystem {
	t.Helper()
	var cfg actor.SystemConfig
	for _, o := range opts {
		o(&cfg)
	}
	clock := scheduler.NewManualClock(virtualEpoch)
	tl := &traceLog{}
	exec := scheduler.NewManual(scheduler.ManualConfig{
		Clock:      clock,
		Throughput: cfg.Throughput,
		Trace: func(r scheduler.Runnable, res scheduler.InvokeResult) {
			var pid *actor.PID
			if s, ok := r.(interface{ Self() *actor.PID }); ok {
				pid = s.Self()
			}
			e := TraceEntry{At: clock.Now().Sub(virtualEpoch), PID: pid, Result: res}
			tl.mu.Lock()
			tl.entries = append(tl.entries, e)
			tl.mu.Unlock()
		},
	})
	// A system that never becomes idle (an actor that messages itself on
	// every turn) fails the test once instead of hanging it, with the
	// trace growing by an entry per invocation meanwhile.
	var busyOnce sync.Once
	exec.SetBusyLimit(ManualBusyLimit, func(n int) {
		busyOnce.Do(func() {
			t.Errorf("testkit: the manual system is still busy after %d invocations at one virtual instant: an actor keeps itself busy (a message to itself, or a timer of zero delay, on every turn?); see Trace", n)
		})
	})
	// Registered before NewSystem's cleanup, so it runs after it: the
	// shutdown may still need the executor's resume timers.
	t.Cleanup(exec.Shutdown)
	all := append(append([]Option(nil), opts...), func(c *actor.SystemConfig) {
		c.Dispatcher = exec
		c.Clock = clock
		c.DeterministicIDs = true
	})
	sys := NewSystem(t, all...)
	if sys == nil {
		return nil
	}
	exec.RunUntilIdle()
	return &ManualSystem{System: sys, Exec: exec, Clock: clock, trace: tl}
}

// Trace returns every invocation so far, in order.
func (m *ManualSystem) Trace() []TraceEntry {
	m.trace.mu.Lock()
	defer m.trace.mu.Unlock()
	return append([]TraceEntry(nil), m.trace.entries...)
}

// TraceStrings returns Trace rendered with TraceEntry.String, for
// comparing runs.
func (m *ManualSystem) TraceStrings() []string {
	tr := m.Trace()
	out := make([]string, len(tr))
	for i, e := range tr {
		out[i] = e.String()
	}
	return out
}

// ResetTrace forgets the invocations so far.
func (m *ManualSystem) ResetTrace() {
	m.trace.mu.Lock()
	m.trace.entries = nil
	m.trace.mu.Unlock()
}

// TraceOf returns the results of pid's invocations, in order.
func (m *ManualSystem) TraceOf(pid *actor.PID) []scheduler.InvokeResult {
	var out []scheduler.InvokeResult
	for _, e := range m.Trace() {
		if e.PID != nil && e.PID.Equal(pid) {
			out = append(out, e.Result)
		}
	}
	return out
}

// Step runs one invocation; false when nothing was ready.
func (m *ManualSystem) Step() bool { return m.Exec.RunOnce() }

// RunUntilIdle runs invocations until nothing is ready and returns how
// many ran. It does not move the clock.
func (m *ManualSystem) RunUntilIdle() int { return m.Exec.RunUntilIdle() }

// Advance runs what is ready, then moves the virtual clock forward by d one
// timer deadline at a time, firing the timers due (receive timeouts,
// resume timers, backoff restarts, future timeouts) and running the system
// until idle at each. It returns the invocations run.
func (m *ManualSystem) Advance(d time.Duration) int { return m.Exec.Advance(d) }

// Now returns the virtual time.
func (m *ManualSystem) Now() time.Time { return m.Clock.Now() }

// Elapsed returns the virtual time since the system started.
func (m *ManualSystem) Elapsed() time.Duration { return m.Clock.Now().Sub(virtualEpoch) }
