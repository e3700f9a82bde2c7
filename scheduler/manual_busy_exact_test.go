package scheduler_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/fraktor-go/fraktor/scheduler"
)

// The busy limit bounds the invocations at one virtual instant; a system
// that needs exactly that many and is then idle is not busy. Before, a run
// that reached the limit reported busy without looking whether anything
// was left: RunUntilIdle failed such a test (onBusy) and Advance stopped
// at that instant, short of its target, with nothing left to run.
func TestManualBusyLimitExactlyReachedIsIdle(t *testing.T) {
	const limit = 3
	t.Run("RunUntilIdle", func(t *testing.T) {
		m := scheduler.NewManual(scheduler.ManualConfig{})
		defer m.Shutdown()
		var calls []int
		m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
		for range limit {
			m.Schedule(&fakeRunnable{})
		}
		assert.Equal(t, limit, m.RunUntilIdle())
		assert.False(t, m.Busy())
		assert.Empty(t, calls, "onBusy calls")
	})
	t.Run("Advance", func(t *testing.T) {
		m := scheduler.NewManual(scheduler.ManualConfig{})
		defer m.Shutdown()
		var calls []int
		m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
		start := m.Clock().Now()
		for range limit {
			r := &fakeRunnable{}
			m.Clock().AfterFunc(time.Second, func() { m.Schedule(r) })
		}
		assert.Equal(t, limit, m.Advance(2*time.Second))
		assert.False(t, m.Busy())
		assert.Empty(t, calls, "onBusy calls")
		assert.Equal(t, start.Add(2*time.Second), m.Clock().Now(), "the Advance reached its target")
	})
	// The limit spent, a timer of zero delay at the same instant that
	// schedules one more is one invocation too many: busy, and it does
	// not run (a remaining budget of 0 is no budget, not an unbounded run).
	t.Run("one more at the same instant", func(t *testing.T) {
		m := scheduler.NewManual(scheduler.ManualConfig{})
		defer m.Shutdown()
		var calls []int
		m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
		extra := &fakeRunnable{}
		for i := range limit {
			r := &fakeRunnable{}
			if i == limit-1 {
				r.onInvoke = func(*fakeRunnable) { m.Clock().AfterFunc(0, func() { m.Schedule(extra) }) }
			}
			m.Clock().AfterFunc(time.Second, func() { m.Schedule(r) })
		}
		assert.Equal(t, limit, m.Advance(2*time.Second))
		assert.True(t, m.Busy())
		assert.Equal(t, []int{limit}, calls, "onBusy calls")
		assert.Zero(t, extra.runs.Load(), "past the limit")
	})
}
