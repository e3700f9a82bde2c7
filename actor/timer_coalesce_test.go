package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A periodic timer has at most one tick waiting in its owner's mailbox: an
// actor that falls behind its period (a slow handler, a busy worker) gets
// the next tick when it catches up, not one for every period it missed, so
// its mailbox cannot fill without bound. Before, each period queued a tick.
func TestPeriodicTimerKeepsOneTickQueued(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	pid := sys.Root().Spawn(timerActor(&got))
	sys.Root().Send(pid, startTimer{key: "beat", d: 10 * time.Millisecond, periodic: true, msg: tick{}})
	sys.RunUntilIdle()
	for range 100 {
		sys.Clock.Advance(10 * time.Millisecond) // the timer fires; the actor does not run
	}
	sys.RunUntilIdle()
	require.Equal(t, []any{tick{}}, got)
	sys.Advance(10 * time.Millisecond)
	require.Equal(t, []any{tick{}, tick{}}, got, "the next period ticks again")
}

// A period below a millisecond (0 or negative included) is a millisecond:
// a period of a nanosecond kept the timer queue firing without pause.
func TestPeriodicTimerMinimumPeriod(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.SendEvery(0, c.Self(), "every")
			c.Timers().StartPeriodic("k", time.Nanosecond, "keyed")
		case string:
			got = append(got, m)
		}
	}))
	require.NotNil(t, pid)
	sys.RunUntilIdle()
	sys.Advance(time.Millisecond - time.Nanosecond)
	require.Empty(t, got)
	sys.Advance(time.Nanosecond)
	require.ElementsMatch(t, []any{"every", "keyed"}, got)
}
