package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// A runnable that keeps itself busy through zero-delay timers (each run
// arms AfterFunc(0) to schedule it again, as an actor's SendAfter(0) to
// itself does) never lets an Advance move the clock: every deadline is
// now. The busy limit must end that Advance as it ends a RunUntilIdle.
// The runnable gives up after far more runs than the limit, so the test
// ends without the bound too (and then fails).
func TestManualBusyLimitZeroDelayTimers(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	defer m.Shutdown()
	const limit, giveUp = 10, 10_000
	var calls []int
	m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
	r := &fakeRunnable{}
	r.onInvoke = func(f *fakeRunnable) {
		if f.runs.Load() < giveUp {
			m.Clock().AfterFunc(0, func() { m.Schedule(f) })
		}
	}
	m.Schedule(r)
	start := m.Clock().Now()
	n := m.Advance(time.Second)
	assert.LessOrEqual(t, n, limit, "invocations in the Advance")
	assert.Equal(t, []int{limit}, calls, "onBusy calls")
	assert.Equal(t, start, m.Clock().Now(), "the clock stays where the system was found busy")
	assert.True(t, m.Busy())
}

// A runnable that is never done (it yields on every run) alongside a timer
// that falls due every millisecond: once the run at the first deadline has
// found the system busy, Advance returns instead of spending the limit
// again at each of the thousand deadlines of the second.
func TestManualBusyLimitEndsAdvance(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	defer m.Shutdown()
	const limit = 10
	var calls []int
	m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
	script := make([]scheduler.InvokeResult, 20_000)
	for i := range script {
		script[i] = scheduler.Yielded()
	}
	m.Schedule(&fakeRunnable{script: script})
	var tick func()
	tick = func() { m.Clock().AfterFunc(time.Millisecond, tick) }
	tick()
	n := m.Advance(time.Second)
	assert.LessOrEqual(t, n, limit, "invocations in the Advance")
	require.Len(t, calls, 1, "onBusy calls")
	assert.True(t, m.Busy())
	m.SetBusyLimit(0, nil)
	m.Advance(0)
	assert.False(t, m.Busy(), "an Advance that ends idle")
}
