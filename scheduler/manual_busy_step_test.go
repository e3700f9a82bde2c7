package scheduler_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Busy describes the last run of the executor, and a RunOnce (the
// testkit's Step) is a run: one invocation, which never stops at the busy
// limit. Before, Busy kept what the last RunUntilIdle or Advance found, so
// a driver that stepped a busy executor still saw it busy, and the
// testkit's probes, which run the system again only once the test has run
// it (Step, RunUntilIdle, Advance), never ran it again after a Step.
func TestManualRunOnceEndsBusy(t *testing.T) {
	m := scheduler.NewManual(scheduler.ManualConfig{})
	defer m.Shutdown()
	const limit = 2
	var calls []int
	m.SetBusyLimit(limit, func(n int) { calls = append(calls, n) })
	for range limit + 2 {
		m.Schedule(&fakeRunnable{})
	}
	require.Equal(t, limit, m.RunUntilIdle())
	require.True(t, m.Busy(), "the run stopped at the limit")

	require.True(t, m.RunOnce())
	assert.False(t, m.Busy(), "after a RunOnce")
	assert.Equal(t, 1, m.Pending())

	// The next run is bounded afresh, and Busy again says how it ended.
	assert.Equal(t, 1, m.RunUntilIdle())
	assert.False(t, m.Busy())
	assert.Equal(t, []int{limit}, calls, "onBusy calls")

	// A RunOnce with nothing ready ends a busy state too: the test drove
	// the executor and found it idle.
	for range limit + 1 {
		m.Schedule(&fakeRunnable{})
	}
	m.RunUntilIdle()
	require.True(t, m.Busy())
	require.True(t, m.RunOnce())
	require.False(t, m.RunOnce())
	assert.False(t, m.Busy())
}
