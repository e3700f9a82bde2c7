package testkit_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// zeroDelayLoop spawns an actor that, on each "again", sends itself another
// after 0: a timer of zero delay falls due at once, so the system is never
// idle at the instant it stands at and virtual time cannot move past it.
// It gives up after giveUp turns (*turns counts them), so that a test of
// the busy limit ends even without the bound.
func zeroDelayLoop(ms *testkit.ManualSystem, turns *int, giveUp int) *actor.PID {
	pid := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			*turns++
			if *turns < giveUp {
				c.SendAfter(0, c.Self(), "again")
			}
		}
	}))
	ms.Root().Send(pid, "again")
	return pid
}

// Advance on a system kept busy by zero-delay timers fails the test once
// and returns at the busy limit; before, each deadline's run was bounded
// alone and every deadline stood at now, so the Advance went on for as
// long as the actor armed timers (for ever).
func TestManualSystemBusyWithZeroDelayTimersFails(t *testing.T) {
	rec := newRecorder(t)
	ms := testkit.NewManualSystem(rec)
	turns := 0
	zeroDelayLoop(ms, &turns, 3*testkit.ManualBusyLimit)
	start := ms.Elapsed()
	n := ms.Advance(time.Second)
	assert.LessOrEqual(t, n, testkit.ManualBusyLimit, "invocations in the Advance")
	assert.Less(t, turns, 3*testkit.ManualBusyLimit, "the Advance stopped the loop, not the actor")
	assert.Equal(t, start, ms.Elapsed(), "the clock stays at the busy instant")
	require.Len(t, rec.Errors(), 1)
	assert.Contains(t, rec.Errors()[0], "still busy")
	turns = 3 * testkit.ManualBusyLimit // let the actor go idle for the cleanup
}

// A probe's wait on such a system returns too: it advanced the clock one
// deadline at a time, and every deadline was now.
func TestManualProbeWaitOnBusySystemReturns(t *testing.T) {
	rec := newRecorder(t)
	ms := testkit.NewManualSystem(rec)
	p := testkit.NewManualProbe(rec, ms)
	turns := 0
	zeroDelayLoop(ms, &turns, 3*testkit.ManualBusyLimit)
	p.ExpectNoMsg(time.Second)
	assert.Less(t, turns, 3*testkit.ManualBusyLimit, "the wait stopped the loop, not the actor")
	require.NotEmpty(t, rec.Errors())
	assert.Contains(t, rec.Errors()[0], "still busy")
	assert.Empty(t, rec.Fatals(), "no message arrived")
	turns = 3 * testkit.ManualBusyLimit
}

// FishForMsg on a system that is never idle and keeps sending the probe
// messages that do not match returns too: each wait ran the system to the
// busy limit again, which queued another run of messages to skip, so the
// fishing never ran out of them while the actor went on.
func TestManualFishOnBusySystemReturns(t *testing.T) {
	rec := newRecorder(t)
	ms := testkit.NewManualSystem(rec, func(c *actor.SystemConfig) { c.Throughput = 1 })
	p := testkit.NewManualProbe(rec, ms)
	const giveUp = 3 * testkit.ManualBusyLimit
	turns := 0
	pid := ms.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			turns++
			if turns < giveUp {
				c.Send(p.PID(), "not it")
				c.Send(c.Self(), "again")
			}
		}
	}))
	ms.Root().Send(pid, "again")
	testkit.FishForMsg[int](p, nil, time.Second)
	assert.Less(t, turns, giveUp, "the fishing stopped the loop, not the actor")
	require.NotEmpty(t, rec.Errors())
	assert.Contains(t, rec.Errors()[0], "still busy")
	require.Len(t, rec.Fatals(), 1)
	assert.Contains(t, rec.Fatals()[0], "FishForMsg[int]: no match")
	turns = giveUp
}
