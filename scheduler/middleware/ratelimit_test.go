package middleware_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

var epoch = time.Unix(0, 0).UTC()

// advanceTo moves the Manual executor to target one due timer at a time, so
// that every resume runs at the instant it falls due, as on a real clock.
func advanceTo(m *scheduler.Manual, target time.Time) {
	c := m.Clock()
	for {
		next, ok := c.NextDeadline()
		if !ok || next.After(target) {
			m.Advance(target.Sub(c.Now()))
			return
		}
		m.Advance(next.Sub(c.Now()))
	}
}

func newManual(t *testing.T, throughput int) *scheduler.Manual {
	t.Helper()
	m := scheduler.NewManual(scheduler.ManualConfig{Clock: scheduler.NewManualClock(epoch), Throughput: throughput})
	t.Cleanup(m.Shutdown)
	return m
}

func newRateLimit(t testing.TB, perSecond float64, burst int, clock scheduler.Clock) *middleware.RateLimit {
	t.Helper()
	rl, err := middleware.NewRateLimit(middleware.RateLimitConfig{PerSecond: perSecond, Burst: burst}, clock)
	require.NoError(t, err)
	return rl
}

// S4: a runnable limited to N msgs/s with burst B processes exactly
// B + ⌊N·t⌋ messages by virtual time t, driven by the Manual executor.
func TestRateLimit_ExactCountPerVirtualSecond(t *testing.T) {
	tests := []struct {
		perSecond  float64
		burst      int
		throughput int
	}{
		{100, 10, 50},
		{250, 1, 300},
		{7, 3, 5},
		{1000, 100, 30},
		{3, 10, 2},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%v per s burst %d hint %d", tt.perSecond, tt.burst, tt.throughput), func(t *testing.T) {
			m := newManual(t, tt.throughput)
			rl := newRateLimit(t, tt.perSecond, tt.burst, m.Clock())
			v := newTestInvoker(1, m.Clock(), 1_000_000, rl)
			m.Schedule(v)
			m.RunUntilIdle()
			require.Equal(t, tt.burst, v.processed, "the full bucket goes at t=0")

			for _, at := range []time.Duration{500 * time.Millisecond, time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Second} {
				advanceTo(m, epoch.Add(at))
				want := tt.burst + int(math.Floor(tt.perSecond*at.Seconds()))
				require.Equal(t, want, v.processed, "processed by t=%s", at)
			}
			assert.Equal(t, 1, m.PendingTimers(), "the mailbox waits for its next token")
			for _, r := range v.results {
				if r.Kind == scheduler.ResultSuspended {
					assert.Equal(t, scheduler.ReasonRateLimit, r.Reason)
					assert.Greater(t, r.ResumeOn.After, time.Duration(0))
				}
			}
		})
	}
}

func TestRateLimit_BreakWaitsForOneToken(t *testing.T) {
	m := newManual(t, 50)
	v := newTestInvoker(1, m.Clock(), 1000, newRateLimit(t, 100, 10, m.Clock()))
	m.Schedule(v)
	m.RunUntilIdle()
	require.Equal(t, []scheduler.InvokeResult{
		scheduler.Completed(true), // 10 of 50: capped by the bucket
		scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(10*time.Millisecond)),
	}, v.results)
	m.Advance(10 * time.Millisecond)
	assert.Equal(t, 11, v.processed)
}

// Without MetaBatchLimit support the overdraft becomes debt, and the long-run
// count stays within one batch of the exact figure.
func TestRateLimit_IgnoredBatchLimitStillAveragesRate(t *testing.T) {
	const perSecond, burst, hint = 100, 10, 50
	m := newManual(t, hint)
	v := newTestInvoker(1, m.Clock(), 1_000_000, newRateLimit(t, perSecond, burst, m.Clock()))
	v.ignoreLimit = true
	m.Schedule(v)
	m.RunUntilIdle()
	require.Equal(t, hint, v.processed)
	for s := 1; s <= 10; s++ {
		advanceTo(m, epoch.Add(time.Duration(s)*time.Second))
		exact := burst + perSecond*s
		assert.InDelta(t, exact, v.processed, hint, "t=%ds", s)
		assert.LessOrEqual(t, v.processed, exact+hint)
	}
}

// One RateLimit shared by two invokers limits them together.
func TestRateLimit_SharedBucketLimitsTogether(t *testing.T) {
	m := newManual(t, 20)
	rl := newRateLimit(t, 100, 10, m.Clock())
	a := newTestInvoker(1, m.Clock(), 100_000, rl)
	b := newTestInvoker(2, m.Clock(), 100_000, rl)
	m.Schedule(a)
	m.Schedule(b)
	m.RunUntilIdle()
	for s := 1; s <= 3; s++ {
		advanceTo(m, epoch.Add(time.Duration(s)*time.Second))
		assert.Equal(t, 10+100*s, a.processed+b.processed, "t=%ds", s)
	}
	assert.Positive(t, a.processed)
	assert.Positive(t, b.processed)
}

// Tokens are taken for what was processed, not for what was allowed.
func TestRateLimit_TakesOnlyProcessed(t *testing.T) {
	m := newManual(t, 50)
	rl := newRateLimit(t, 100, 10, m.Clock())
	v := newTestInvoker(1, m.Clock(), 3, rl)
	m.Schedule(v)
	m.RunUntilIdle()
	assert.Equal(t, 3, v.processed)
	assert.InDelta(t, 7, rl.Tokens(), 1e-9)
}

func TestRateLimit_BeforeInvoke(t *testing.T) {
	clock := scheduler.NewManualClock(epoch)
	tests := []struct {
		name       string
		take       int // tokens taken before the call (burst 10, 100/s)
		hint       int
		preset     int // existing MetaBatchLimit, 0 = none
		wantFlow   scheduler.ControlFlow
		wantLimit  int // 0 = not set
		wantResume time.Duration
	}{
		{"full bucket, hint above", 0, 50, 0, scheduler.Continue, 10, 0},
		{"full bucket, hint below", 0, 4, 0, scheduler.Continue, 0, 0},
		{"hint equal", 0, 10, 0, scheduler.Continue, 0, 0},
		{"no hint means no cap from the hint", 0, 0, 0, scheduler.Continue, 10, 0},
		{"partial bucket", 7, 50, 0, scheduler.Continue, 3, 0},
		{"smaller preset limit is kept", 7, 50, 2, scheduler.Continue, 2, 0},
		{"larger preset limit is lowered", 7, 50, 5, scheduler.Continue, 3, 0},
		{"empty bucket breaks for one token", 10, 50, 0, scheduler.Break, 0, 10 * time.Millisecond},
		{"debt waits longer", 30, 50, 0, scheduler.Break, 0, 210 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rl := newRateLimit(t, 100, 10, clock)
			var ic scheduler.InvokeContext
			ic.Reset(1, 50, clock.Now())
			ic.Processed = tt.take
			rl.AfterInvoke(&ic, scheduler.Completed(false))

			ic.Reset(1, tt.hint, clock.Now())
			if tt.preset > 0 {
				middleware.LimitBatch(&ic, tt.preset)
			}
			assert.Equal(t, tt.wantFlow, rl.BeforeInvoke(&ic))
			limit, ok := middleware.BatchLimit(&ic)
			assert.Equal(t, tt.wantLimit != 0, ok)
			assert.Equal(t, tt.wantLimit, limit)
			if tt.wantFlow == scheduler.Break {
				assert.Equal(t, tt.wantResume, ic.ResumeAfter())
			} else {
				_, set := ic.Get(scheduler.MetaResumeAfter)
				assert.False(t, set)
			}
		})
	}
}

func TestRateLimit_Unlimited(t *testing.T) {
	clock := scheduler.NewManualClock(epoch)
	rl := newRateLimit(t, math.Inf(1), 1, clock)
	var ic scheduler.InvokeContext
	for range 3 {
		ic.Reset(1, 300, clock.Now())
		require.Equal(t, scheduler.Continue, rl.BeforeInvoke(&ic))
		_, ok := middleware.BatchLimit(&ic)
		require.False(t, ok)
		ic.Processed = 300
		rl.AfterInvoke(&ic, scheduler.Yielded())
	}
	assert.Equal(t, 1.0, rl.Tokens())
}

func TestRateLimitConfig_Validate(t *testing.T) {
	tests := []struct {
		name string
		cfg  middleware.RateLimitConfig
		want error
	}{
		{"default", middleware.DefaultRateLimitConfig(), nil},
		{"infinite", middleware.RateLimitConfig{PerSecond: math.Inf(1), Burst: 1}, nil},
		{"zero rate", middleware.RateLimitConfig{PerSecond: 0, Burst: 1}, middleware.ErrInvalidRate},
		{"negative rate", middleware.RateLimitConfig{PerSecond: -1, Burst: 1}, middleware.ErrInvalidRate},
		{"NaN rate", middleware.RateLimitConfig{PerSecond: math.NaN(), Burst: 1}, middleware.ErrInvalidRate},
		{"zero burst", middleware.RateLimitConfig{PerSecond: 1, Burst: 0}, middleware.ErrInvalidBurst},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tt.want)
			_, nerr := middleware.NewRateLimit(tt.cfg, nil)
			require.ErrorIs(t, nerr, tt.want)
		})
	}
}

// A bucket larger than the int range (Burst near math.MaxInt, or a finite
// rate so high that one nanosecond's slack is) lets messages through; it
// used to set a batch limit of 0 and hold the mailbox back on every turn.
func TestRateLimit_HugeBucketDoesNotHoldBack(t *testing.T) {
	clock := scheduler.NewManualClock(epoch)
	for _, tc := range []struct {
		name      string
		perSecond float64
		burst     int
	}{
		{"burst MaxInt", 1, math.MaxInt},
		{"rate MaxFloat64", math.MaxFloat64, 1},
		{"rate 1e30", 1e30, 5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rl := newRateLimit(t, tc.perSecond, tc.burst, clock)
			for _, hint := range []int{300, 0} {
				var ic scheduler.InvokeContext
				ic.Reset(1, hint, clock.Now())
				require.Equal(t, scheduler.Continue, rl.BeforeInvoke(&ic))
				if limit, ok := middleware.BatchLimit(&ic); ok {
					assert.GreaterOrEqual(t, limit, 1, "hint %d", hint)
				}
			}
		})
	}
}

// A rate so low that the wait for one token exceeds the time.Duration
// range waits the longest Duration; it used to wait 1 ns, so the mailbox
// was resumed, broke and was resumed again every nanosecond.
func TestRateLimit_TinyRateWaitsLong(t *testing.T) {
	clock := scheduler.NewManualClock(epoch)
	for _, perSecond := range []float64{1e-11, 1e-300} {
		rl := newRateLimit(t, perSecond, 1, clock)
		var ic scheduler.InvokeContext
		ic.Reset(1, 300, clock.Now())
		ic.Processed = 1
		rl.AfterInvoke(&ic, scheduler.Completed(false))
		ic.Reset(1, 300, clock.Now())
		require.Equal(t, scheduler.Break, rl.BeforeInvoke(&ic))
		assert.Equal(t, time.Duration(math.MaxInt64), ic.ResumeAfter(), "rate %v", perSecond)
	}
}
