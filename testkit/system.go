package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Option adjusts the SystemConfig of a test system.
type Option func(*actor.SystemConfig)

// WithConfig replaces the whole config (options after it still apply).
func WithConfig(cfg actor.SystemConfig) Option { return func(c *actor.SystemConfig) { *c = cfg } }

// ShutdownTimeout bounds the shutdown at test cleanup.
var shutdownTimeout = 10 * time.Second

// NewSystem starts a system for one test. At cleanup it shuts the system
// down, fails the test if that fails, and checks that no goroutine started
// during the test is left (goleak).
func NewSystem(t testing.TB, opts ...Option) *actor.System {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	cfg := actor.SystemConfig{Name: "test"}
	for _, o := range opts {
		o(&cfg)
	}
	sys, err := actor.NewSystem(cfg)
	if err != nil {
		t.Fatalf("testkit: NewSystem: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Errorf("testkit: Shutdown: %v", err)
		}
		if err := goleak.Find(ignore); err != nil {
			t.Errorf("testkit: leaked goroutines: %v", err)
		}
	})
	return sys
}

// ManualSystem is a system in deterministic mode: its scheduler is the
// manual executor and its clock is virtual. Nothing runs until the test
// calls Step, RunUntilIdle or Advance, so a scenario gives the same trace on
// every run.
type ManualSystem struct {
	*actor.System
	Exec  *scheduler.Manual
	Clock *scheduler.ManualClock
	trace *traceLog
}

// TraceEntry is one invocation in deterministic mode: the virtual time, the
// actor (nil for non-actor runnables) and the result.
type TraceEntry struct {
	At     time.Duration // since the clock's start
	PID    *actor.PID
	Result scheduler.InvokeResult
}

// String renders the entry for trace comparison.
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

// NewManualSystem starts a deterministic system for one test, starting the
// virtual clock at the Unix epoch. trace, when not nil, is called after every
// invocation.
func NewManualSystem(t testing.TB, opts ...Option) *ManualSystem {
	t.Helper()
	var probe actor.SystemConfig
	for _, o := range opts {
		o(&probe)
	}
	start := time.Unix(0, 0).UTC()
	clock := scheduler.NewManualClock(start)
	tl := &traceLog{}
	exec := scheduler.NewManual(scheduler.ManualConfig{Clock: clock, Throughput: probe.Throughput, Trace: func(r scheduler.Runnable, res scheduler.InvokeResult) {
		var pid *actor.PID
		if s, ok := r.(interface{ Self() *actor.PID }); ok {
			pid = s.Self()
		}
		tl.mu.Lock()
		tl.entries = append(tl.entries, TraceEntry{At: clock.Now().Sub(start), PID: pid, Result: res})
		tl.mu.Unlock()
	}})
	all := append([]Option{func(c *actor.SystemConfig) {
		c.Dispatcher = exec
		c.Clock = clock
	}}, opts...)
	sys := NewSystem(t, all...)
	t.Cleanup(exec.Shutdown)
	exec.RunUntilIdle()
	return &ManualSystem{System: sys, Exec: exec, Clock: clock, trace: tl}
}

// Trace returns every invocation so far, in order.
func (m *ManualSystem) Trace() []TraceEntry {
	m.trace.mu.Lock()
	defer m.trace.mu.Unlock()
	return append([]TraceEntry(nil), m.trace.entries...)
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

// RunUntilIdle runs invocations until nothing is ready; it returns how many ran.
func (m *ManualSystem) RunUntilIdle() int { return m.Exec.RunUntilIdle() }

// Advance moves the virtual clock by d, firing due timers (receive
// timeouts, resume timers, backoff), and runs until idle.
func (m *ManualSystem) Advance(d time.Duration) int { return m.Exec.Advance(d) }

// Now returns the virtual time.
func (m *ManualSystem) Now() time.Time { return m.Clock.Now() }
