package scheduler_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// S9: the executor acts on each result kind.
func TestManualSettlesEachResult(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name       string
		script     []scheduler.InvokeResult
		pending    bool
		wantRuns   int64
		wantIdles  int64
		wantTimers int
		failures   int
	}{
		{"completed without more goes idle", []scheduler.InvokeResult{scheduler.Completed(false)}, false, 1, 1, 0, 0},
		{"completed with ReadyHint runs again", []scheduler.InvokeResult{scheduler.Completed(true), scheduler.Completed(false)}, false, 2, 1, 0, 0},
		{"yielded runs again", []scheduler.InvokeResult{scheduler.Yielded(), scheduler.Yielded(), scheduler.Completed(false)}, false, 3, 1, 0, 0},
		{"idle re-check finds work and runs again", []scheduler.InvokeResult{scheduler.Completed(false), scheduler.Completed(false)}, true, 2, 2, 0, 0},
		{"suspended external waits", []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonActor, scheduler.ResumeExternal())}, false, 1, 1, 0, 0},
		{"suspended after d arms one timer", []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(time.Second))}, false, 1, 0, 1, 0},
		{"failed calls the hook and idles", []scheduler.InvokeResult{scheduler.Failed(boom, time.Second)}, false, 1, 1, 0, 1},
		{"stopped is dropped without idling", []scheduler.InvokeResult{scheduler.Stopped()}, false, 1, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			failures := 0
			m := scheduler.NewManual(scheduler.ManualConfig{OnFailed: func(_ scheduler.Runnable, res scheduler.InvokeResult) {
				assert.ErrorIs(t, res.Err, boom)
				failures++
			}})
			defer m.Shutdown()
			r := &fakeRunnable{script: tt.script}
			r.pending.Store(tt.pending)
			m.Schedule(r)
			m.RunUntilIdle()
			assert.Equal(t, tt.wantRuns, r.runs.Load(), "runs")
			assert.Equal(t, tt.wantIdles, r.idles.Load(), "SetIdle calls")
			assert.Equal(t, tt.wantTimers, m.PendingTimers(), "timers")
			assert.Equal(t, tt.failures, failures, "failure hook calls")
		})
	}
}

// S4/S10: a suspend → resume cycle on the virtual clock.
func TestManualSuspendResumeCycle(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	defer m.Shutdown()
	r := &fakeRunnable{script: []scheduler.InvokeResult{
		scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(100*time.Millisecond)),
		scheduler.Completed(false),
	}}
	m.Schedule(r)
	require.Equal(t, 1, m.RunUntilIdle())
	require.Equal(t, 1, m.PendingTimers())
	require.Equal(t, 0, m.Advance(99*time.Millisecond), "not due yet")
	require.Equal(t, 1, m.Advance(time.Millisecond), "resumed exactly at 100ms")
	require.Equal(t, int64(2), r.runs.Load())
	require.Equal(t, 0, m.PendingTimers())
}

func TestManualShutdownStopsTimers(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	r := &fakeRunnable{script: []scheduler.InvokeResult{scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(time.Second))}}
	m.Schedule(r)
	m.RunUntilIdle()
	m.Shutdown()
	m.Shutdown()
	require.Equal(t, 0, m.Advance(time.Hour))
	require.Equal(t, int64(1), r.runs.Load())
}

func TestBackoff(t *testing.T) {
	want := []time.Duration{100, 200, 400, 800, 1600, 3200, 6400, 10000, 10000}
	for n, w := range want {
		assert.Equal(t, w*time.Millisecond, scheduler.Backoff(n), "n=%d", n)
	}
	assert.Equal(t, 100*time.Millisecond, scheduler.Backoff(-1))
	assert.Equal(t, 10*time.Second, scheduler.Backoff(1000))
}

type recMW struct {
	name  string
	log   *[]string
	brk   bool
	after time.Duration
}

func (m recMW) BeforeInvoke(ctx *scheduler.InvokeContext) scheduler.ControlFlow {
	*m.log = append(*m.log, "before:"+m.name)
	if m.brk {
		if m.after > 0 {
			ctx.Set(scheduler.MetaResumeAfter, m.after)
		}
		return scheduler.Break
	}
	return scheduler.Continue
}

func (m recMW) AfterInvoke(_ *scheduler.InvokeContext, res scheduler.InvokeResult) {
	*m.log = append(*m.log, "after:"+m.name+":"+res.Kind.String())
}

// S8: before in order, after in reverse; a Break stops the chain and the
// members that ran still get AfterInvoke.
func TestCompositeMiddlewareOrder(t *testing.T) {
	var log []string
	c := scheduler.NewComposite(recMW{name: "a", log: &log}, recMW{name: "b", log: &log})
	c.Add(recMW{name: "c", log: &log})
	var ctx scheduler.InvokeContext
	ctx.Reset(1, 10, time.Time{})
	require.Equal(t, scheduler.Continue, c.BeforeInvoke(&ctx))
	c.AfterInvoke(&ctx, scheduler.Completed(false))
	assert.Equal(t, []string{"before:a", "before:b", "before:c", "after:c:Completed", "after:b:Completed", "after:a:Completed"}, log)

	log = nil
	c = scheduler.NewComposite(recMW{name: "a", log: &log}, recMW{name: "b", log: &log, brk: true, after: time.Second}, recMW{name: "c", log: &log})
	ctx.Reset(1, 10, time.Time{})
	require.Equal(t, scheduler.Break, c.BeforeInvoke(&ctx))
	assert.Equal(t, time.Second, ctx.ResumeAfter())
	c.AfterInvoke(&ctx, scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(ctx.ResumeAfter())))
	assert.Equal(t, []string{"before:a", "before:b", "after:b:Suspended", "after:a:Suspended"}, log)

	ctx.Reset(1, 10, time.Time{})
	assert.Equal(t, scheduler.DefaultBreakResume, ctx.ResumeAfter(), "metadata is cleared by Reset")
}

func TestManualClockOrder(t *testing.T) {
	c := scheduler.NewManualClock(time.Unix(0, 0))
	var got []int
	c.AfterFunc(2*time.Second, func() { got = append(got, 2) })
	c.AfterFunc(time.Second, func() {
		got = append(got, 1)
		c.AfterFunc(500*time.Millisecond, func() { got = append(got, 15) })
	})
	stop := c.AfterFunc(time.Second, func() { got = append(got, 99) })
	require.True(t, stop())
	require.False(t, stop())
	require.Equal(t, 3, c.Advance(3*time.Second))
	assert.Equal(t, []int{1, 15, 2}, got)
	assert.Equal(t, time.Unix(3, 0), c.Now())
}

type panicMW struct {
	recMW
	v any
}

func (m panicMW) AfterInvoke(ctx *scheduler.InvokeContext, res scheduler.InvokeResult) {
	m.recMW.AfterInvoke(ctx, res)
	panic(m.v)
}

// AfterInvoke runs on every path: a member whose AfterInvoke panics does not
// cost the members registered before it theirs, and the panic reaches the
// invoker (which makes it the actor's failure).
func TestCompositeAfterInvokePanicRunsTheRest(t *testing.T) {
	var log []string
	c := scheduler.NewComposite(
		recMW{name: "a", log: &log},
		panicMW{recMW{name: "b", log: &log}, "b"},
		recMW{name: "c", log: &log},
		panicMW{recMW{name: "d", log: &log}, "d"},
	)
	var ctx scheduler.InvokeContext
	ctx.Reset(1, 10, time.Time{})
	require.Equal(t, scheduler.Continue, c.BeforeInvoke(&ctx))
	require.Panics(t, func() { c.AfterInvoke(&ctx, scheduler.Completed(false)) })
	assert.Equal(t, []string{
		"before:a", "before:b", "before:c", "before:d",
		"after:d:Completed", "after:c:Completed", "after:b:Completed", "after:a:Completed",
	}, log)

	log = nil
	ctx.Reset(1, 10, time.Time{})
	require.Equal(t, scheduler.Continue, c.BeforeInvoke(&ctx))
	require.Panics(t, func() { c.AfterInvoke(&ctx, scheduler.Completed(false)) })
	assert.Len(t, log, 8, "the next invocation runs the whole chain again")
}

// Virtual time never goes back: not with a negative Advance (it counts as
// 0, firing what is due now), and not when a callback advances the clock
// further than the Advance it runs in, which used to end by setting the
// clock back to its own, earlier target.
func TestManualClockNeverGoesBack(t *testing.T) {
	start := time.Unix(100, 0)
	c := scheduler.NewManualClock(start)
	fired := 0
	c.AfterFunc(0, func() { fired++ })
	assert.Equal(t, 1, c.Advance(-time.Hour))
	assert.Equal(t, 1, fired)
	assert.Equal(t, start, c.Now(), "a negative Advance is Advance(0)")

	c.AfterFunc(5*time.Second, func() { c.Advance(20 * time.Second) })
	c.Advance(10 * time.Second)
	assert.Equal(t, start.Add(25*time.Second), c.Now(), "the nested Advance is kept")

	m := scheduler.NewManual(scheduler.ManualConfig{Clock: c})
	defer m.Shutdown()
	m.Advance(-time.Minute)
	assert.Equal(t, start.Add(25*time.Second), m.Clock().Now())
}

// A nil middleware is left out of a composite instead of panicking on every
// invocation.
func TestCompositeIgnoresNil(t *testing.T) {
	var log []string
	c := scheduler.NewComposite(nil, recMW{name: "a", log: &log})
	c.Add(nil)
	assert.Equal(t, 1, c.Len())
	var ctx scheduler.InvokeContext
	ctx.Reset(1, 10, time.Time{})
	require.NotPanics(t, func() {
		require.Equal(t, scheduler.Continue, c.BeforeInvoke(&ctx))
		c.AfterInvoke(&ctx, scheduler.Completed(false))
	})
	assert.Equal(t, []string{"before:a", "after:a:Completed"}, log)
}

// SetBusyLimit: a runnable that is never done (it yields on every run)
// stops RunUntilIdle at the limit, which calls onBusy once per run; without
// the bound the run would go on for as long as the runnable yields.
func TestManualBusyLimit(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	defer m.Shutdown()
	var calls []int
	m.SetBusyLimit(10, func(n int) { calls = append(calls, n) })
	script := make([]scheduler.InvokeResult, 100)
	for i := range script {
		script[i] = scheduler.Yielded()
	}
	r := &fakeRunnable{script: script}
	m.Schedule(r)
	require.Equal(t, 10, m.RunUntilIdle())
	require.Equal(t, []int{10}, calls)
	require.Equal(t, 10, m.RunUntilIdle(), "the next run is bounded too")
	m.SetBusyLimit(0, nil)
	require.Equal(t, 81, m.RunUntilIdle(), "no bound: the rest of the script and its completion")
	require.Equal(t, []int{10, 10}, calls)
}
