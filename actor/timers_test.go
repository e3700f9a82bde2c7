package actor_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type tick struct{ n int }

type startTimer struct {
	key      string
	d        time.Duration
	periodic bool
	msg      any
}

type cancelTimer struct{ key string }

// timerActor starts and cancels keyed timers on command and records what
// reaches it (the test reads got between runs of the manual executor,
// on the same goroutine).
func timerActor(got *[]any) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case startTimer:
			if m.periodic {
				c.Timers().StartPeriodic(m.key, m.d, m.msg)
			} else {
				c.Timers().StartSingle(m.key, m.d, m.msg)
			}
		case cancelTimer:
			c.Timers().Cancel(m.key)
		case *actor.Started, *actor.Stopping, *actor.Restarting:
		default:
			*got = append(*got, m)
		}
	})
}

// Virtual time fires keyed timers deterministically; a timer
// started under a key replaces the one it had; Cancel stops a periodic one.
func TestTimersKeyedOnVirtualTime(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	pid := sys.Root().Spawn(timerActor(&got))
	sys.Root().Send(pid, startTimer{key: "once", d: 100 * time.Millisecond, msg: "first"})
	sys.Root().Send(pid, startTimer{key: "once", d: 300 * time.Millisecond, msg: "replaced"})
	sys.Root().Send(pid, startTimer{key: "beat", d: 50 * time.Millisecond, periodic: true, msg: tick{}})
	sys.RunUntilIdle()
	sys.Advance(299 * time.Millisecond)
	require.Equal(t, []any{tick{}, tick{}, tick{}, tick{}, tick{}}, got, "5 beats in 299ms, the replaced single timer never fires")
	sys.Advance(time.Millisecond)
	// At 300ms both are due; the single timer was armed before beat 6.
	require.Equal(t, []any{tick{}, tick{}, tick{}, tick{}, tick{}, "replaced", tick{}}, got)
	sys.Root().Send(pid, cancelTimer{key: "beat"})
	sys.RunUntilIdle()
	sys.Advance(time.Second)
	require.Len(t, got, 7, "nothing after Cancel")
}

// A tick already queued when the timer is cancelled is dropped: Cancel is
// exact on the actor's turn.
func TestTimerCancelDropsQueuedTick(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	pid := sys.Root().Spawn(timerActor(&got))
	sys.Root().Send(pid, startTimer{key: "k", d: 10 * time.Millisecond, msg: "late"})
	sys.RunUntilIdle()
	// The cancel is queued, then the timer fires without the actor
	// running: its tick waits in the mailbox behind the cancel.
	sys.Root().Send(pid, cancelTimer{key: "k"})
	sys.Clock.Advance(10 * time.Millisecond)
	sys.Root().Send(pid, "after")
	sys.RunUntilIdle()
	require.Equal(t, []any{"after"}, got)
}

// Timers owned by an actor are cancelled when it stops: nothing
// reaches Receive after Stopped, and nothing stays armed.
func TestTimersCancelledAtStop(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var log []any
	stopped := false
	target := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Timers().StartPeriodic("beat", 10*time.Millisecond, tick{})
			c.SendEvery(10*time.Millisecond, target.PID(), "out")
			c.SendAfter(time.Hour, c.Self(), "never")
		case *actor.Stopping:
			c.SendAfter(time.Millisecond, c.Self(), "set while stopping")
		case *actor.Stopped:
			stopped = true
		default:
			require.False(t, stopped, "a message after Stopped")
			log = append(log, c.Message())
		}
	}))
	sys.RunUntilIdle()
	sys.Advance(30 * time.Millisecond)
	require.Len(t, log, 3)
	for i := 0; i < 3; i++ {
		target.ExpectMsgEqual("out", 0)
	}
	// Fire once more without running the actor, then stop it: the ticks
	// queued become nothing.
	sys.Clock.Advance(10 * time.Millisecond)
	stop := sys.Root().StopFuture(pid)
	sys.RunUntilIdle()
	require.NoError(t, stop.Wait())
	sys.Advance(2 * time.Hour)
	require.True(t, stopped)
	require.Len(t, log, 3)
	target.ExpectNoMsg(0)
	require.Zero(t, sys.DeadLetters(), "the owner's own ticks are not dead letters")
}

// A restart cancels the timers of the failed instance.
func TestTimersCancelledAtRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	starts := 0
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			starts++
			if starts == 1 {
				c.Timers().StartPeriodic("old", 10*time.Millisecond, "old")
			}
		case string:
			if m == "boom" {
				panic("boom")
			}
			got = append(got, m)
		}
	}))
	sys.RunUntilIdle()
	sys.Advance(10 * time.Millisecond)
	require.Equal(t, []any{"old"}, got)
	sys.Root().Send(pid, "boom")
	sys.Advance(time.Second)
	require.Equal(t, 2, starts)
	require.Equal(t, []any{"old"}, got, "the old instance's timer died with it")
}

// SendAfter to another actor goes out on the owner's turn; Cancel before
// the deadline stops it.
func TestSendAfterToOther(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	var keep *actor.Timer
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message() {
		case "arm":
			c.SendAfter(20*time.Millisecond, probe.PID(), "hello")
			keep = c.SendAfter(30*time.Millisecond, probe.PID(), "cancelled")
		case "cancel":
			require.True(t, keep.Cancel())
			require.False(t, keep.Cancel())
			require.False(t, keep.Active())
		}
	}))
	sys.Root().Send(pid, "arm")
	sys.RunUntilIdle()
	probe.ExpectNoMsg(19 * time.Millisecond)
	probe.ExpectMsgEqual("hello", time.Millisecond)
	sys.Root().Send(pid, "cancel")
	sys.RunUntilIdle()
	probe.ExpectNoMsg(time.Second)
}

// On the wall clock too.
func TestSendAfterWallClock(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	probe := testkit.NewProbe(t, sys)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			c.SendAfter(5*time.Millisecond, probe.PID(), "hello")
		}
	}))
	probe.ExpectMsgEqual("hello", 5*time.Second)
}

// 100,000 armed timers cost memory, not goroutines.
func TestHundredThousandTimersNoGoroutines(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	before := runtime.NumGoroutine()
	done := make(chan struct{})
	const n = 100_000
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "arm" {
			for i := 0; i < n; i++ {
				c.Timers().StartSingle(i, time.Hour, i)
			}
			close(done)
		}
	}))
	sys.Root().Send(pid, "arm")
	<-done
	require.LessOrEqual(t, runtime.NumGoroutine(), before)
	require.NoError(t, sys.Root().StopFuture(pid).Wait())
}

// SendAfter and SendEvery to a nil PID dead-letter the message with
// ErrNilPID instead of arming a timer. Before, a nil target meant "the
// owner" inside the timer, so the message went to the actor that armed it.
func TestSendAfterNilPID(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	var timers []*actor.Timer
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "arm" {
				timers = append(timers, c.SendAfter(time.Millisecond, nil, "after"), c.SendEvery(time.Millisecond, nil, "every"))
				return
			}
			got = append(got, m)
		}
	}))
	events := make(chan *actor.DeadLetterEvent, 4)
	sub := actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { events <- e })
	defer sys.EventStream().Unsubscribe(sub)
	sys.Root().Send(pid, "arm")
	sys.RunUntilIdle()
	sys.Advance(10 * time.Millisecond)
	require.Empty(t, got, "nothing reached the actor that armed the timers")
	for _, tm := range timers {
		require.False(t, tm.Active())
	}
	for range 2 {
		select {
		case e := <-events:
			require.ErrorIs(t, e.Reason, actor.ErrNilPID)
		case <-time.After(10 * time.Second):
			t.Fatal("no dead letter")
		}
	}
}
