package main

// What a Hollywood user carries over, checked against fraktor-go's public API.
// docs/coming-from-hollywood.md cites these tests by name.

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	hwPing  struct{}
	hwPong  struct{}
	hwMark  struct{ N int }
	hwBlock struct{ release chan struct{} }
)

// Hollywood's c.Send(pid, msg) makes the actor the sender, so the receiver
// can c.Respond. fraktor-go's c.Send has no sender: the Respond is a dead
// letter (PID nil). c.Request is the send that carries the sender.
func TestHollywoodSendFromActorCarriesNoSender(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	deadLetters := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	probe := testkit.NewManualProbe(t, sys)
	ponger := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*hwPing); ok {
			c.Respond(&hwPong{})
		}
	}))
	for _, useRequest := range []bool{false, true} {
		sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Started:
				if useRequest {
					c.Request(ponger, &hwPing{})
				} else {
					c.Send(ponger, &hwPing{}) // Hollywood's c.Send
				}
			case *hwPong:
				c.Send(probe.PID(), fmt.Sprintf("pong (request %v)", useRequest))
			}
		}))
		if !useRequest {
			dl := testkit.ExpectEvent[*actor.DeadLetterEvent](deadLetters, time.Second)
			require.Nil(t, dl.PID, "a Respond without a sender")
			require.IsType(t, &hwPong{}, dl.Message)
		}
	}
	require.Equal(t, "pong (request true)", testkit.ExpectMsg[string](probe, time.Second))
	probe.ExpectNoMsg(0)
}

// A panic restarts the actor at once (no restart delay, the clock does not
// move) with a fresh instance from the producer; the old instance gets
// Restarting (Hollywood: Stopped), the message that failed is dropped and
// the messages queued behind it stay and reach the new instance.
func TestHollywoodRestartFreshInstanceKeepsQueue(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	instances := 0
	pid := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		instances++
		me, n := instances, 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started, *actor.Restarting, *actor.Stopped:
				c.Send(probe.PID(), fmt.Sprintf("instance %d: %T", me, m))
			case *hwMark:
				if m.N < 0 {
					panic("boom")
				}
				n += m.N
				c.Send(probe.PID(), fmt.Sprintf("instance %d: n=%d", me, n))
			}
		})
	}))
	sys.Root().Send(pid, &hwMark{N: 1})
	sys.Root().Send(pid, &hwMark{N: -1}) // fails
	sys.Root().Send(pid, &hwMark{N: 2})
	sys.Root().Send(pid, &hwMark{N: 3})
	for _, want := range []string{
		"instance 1: *actor.Started", "instance 1: n=1", "instance 1: *actor.Restarting",
		"instance 2: *actor.Started", "instance 2: n=2", "instance 2: n=5",
	} {
		probe.ExpectMsgEqual(want, 0) // timeout 0: the virtual clock never moves
	}
	require.Zero(t, sys.Elapsed())
}

// Hollywood's WithMaxRestarts(3) is the parent's OneForOne(3, window, …):
// three restarts, and the fourth failure stops the actor (its watchers get
// Terminated). The default strategy allows 10 restarts in 10 s.
func TestHollywoodMaxRestarts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		strategy actor.SupervisorStrategy
		restarts int
	}{
		{"OneForOne(3)", actor.OneForOne(3, time.Hour, actor.DefaultDecider), 3},
		{"default", nil, 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(tc.strategy))
			probe := testkit.NewManualProbe(t, sys)
			pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message().(type) {
				case *actor.Restarting:
					c.Send(probe.PID(), "restarting")
				case *hwPing:
					panic("boom")
				}
			}))
			probe.Watch(pid)
			for i := 0; i <= tc.restarts; i++ {
				sys.Root().Send(pid, &hwPing{})
			}
			for i := 0; i < tc.restarts; i++ {
				probe.ExpectMsgEqual("restarting", 0)
			}
			probe.ExpectTerminated(pid, 0)
		})
	}
}

// Stop (Hollywood's engine.Stop) ends the actor after the current message;
// what was queued becomes dead letters. Poison (engine.Poison) handles the
// queued messages first.
func TestHollywoodStopDropsQueuedPoisonHandlesIt(t *testing.T) {
	for _, poison := range []bool{false, true} {
		t.Run(fmt.Sprintf("poison=%v", poison), func(t *testing.T) {
			sys := testkit.NewManualSystem(t)
			deadLetters := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
			handled := 0
			pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*hwMark); ok {
					handled++
				}
			}))
			sys.RunUntilIdle()
			for i := 0; i < 5; i++ {
				sys.Root().Send(pid, &hwMark{N: i})
			}
			var f *actor.Future
			if poison {
				f = sys.Root().PoisonFuture(pid)
			} else {
				f = sys.Root().StopFuture(pid)
			}
			sys.RunUntilIdle()
			require.NoError(t, f.Wait())
			if poison {
				require.Equal(t, 5, handled)
				deadLetters.ExpectNoEvent(0)
			} else {
				require.Equal(t, 0, handled)
				for i := 0; i < 5; i++ {
					require.Equal(t, &hwMark{N: i}, testkit.ExpectEvent[*actor.DeadLetterEvent](deadLetters, 0).Message)
				}
			}
		})
	}
}

// A request to a PID with no actor fails at once with ErrDeadLetter
// (Hollywood's Result waits out its timeout); one to an actor that does not
// answer fails with ErrTimeout when the timeout passes; a reply of another
// type is a *TypeMismatchError.
func TestHollywoodRequestErrors(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*hwPong); ok {
			c.Respond("a string")
		}
	}))
	f := sys.Root().RequestFuture(actor.NewPID(actor.LocalAddress, "nobody"), &hwPing{}, time.Hour)
	sys.RunUntilIdle()
	_, err := f.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.Zero(t, sys.Elapsed(), "failed without waiting")

	f = sys.Root().RequestFuture(silent, &hwPing{}, 500*time.Millisecond)
	sys.RunUntilIdle()
	select {
	case <-f.Done():
		t.Fatal("completed before its timeout")
	default:
	}
	sys.Advance(500 * time.Millisecond)
	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrTimeout)

	f = sys.Root().RequestFuture(silent, &hwPong{}, time.Second)
	sys.RunUntilIdle()
	v, err := f.Result()
	require.NoError(t, err)
	require.Equal(t, "a string", v)

	// actor.Request blocks its caller, which drives nothing on a manual
	// system (it would wait out ctx in wall time): a real one.
	real := testkit.NewSystem(t)
	answers := real.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*hwPing); ok {
			c.Respond("a string")
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = actor.Request[*hwPong](ctx, real.Root(), answers, &hwPing{})
	var mismatch *actor.TypeMismatchError
	require.ErrorAs(t, err, &mismatch)
}

// The EventStream carries no start or stop events: a spawn and a stop
// publish nothing (Hollywood publishes ActorStartedEvent,
// ActorStoppedEvent…); a restart publishes *actor.SupervisionEvent (where
// Hollywood publishes ActorRestartedEvent); user events published with
// Publish reach subscribers in publish order, and dead letters are there.
func TestHollywoodEventStreamHasNoStartStopEvents(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	all := testkit.NewEventProbe(t, sys.System)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*hwPing); ok {
			panic("boom")
		}
	}))
	sys.Root().Send(pid, &hwPing{}) // a restart
	sys.RunUntilIdle()              // before the Stop, which would overtake it
	restarted := testkit.ExpectEvent[*actor.SupervisionEvent](all, 0)
	require.True(t, restarted.Child.Equal(pid))
	require.Equal(t, actor.RestartDirective, restarted.Directive)
	stopped := sys.Root().StopFuture(pid)
	sys.RunUntilIdle() // a manual system runs nothing by itself: Wait before this would hang
	require.NoError(t, stopped.Wait())
	sys.Root().Send(pid, &hwMark{N: 7}) // a dead letter
	sys.EventStream().Publish(&hwMark{N: 1})
	dl := testkit.ExpectEvent[*actor.DeadLetterEvent](all, 0)
	require.Equal(t, &hwMark{N: 7}, dl.Message)
	require.Equal(t, &hwMark{N: 1}, testkit.ExpectEvent[*hwMark](all, 0), "nothing published between")
	all.ExpectNoEvent(0)
}

// Hollywood's WithInboxSize(n) sizes a ring buffer that grows; fraktor-go's
// mailbox is unbounded by default, and WithBoundedMailbox(n, policy) is a
// bound: what it leaves out is a dead letter with ErrMailboxFull.
func TestHollywoodBoundedMailboxIsABound(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	deadLetters := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*hwMark); ok {
			got = append(got, m.N)
		}
	}, actor.WithBoundedMailbox(2, mailbox.DropNewest)))
	sys.RunUntilIdle()
	for i := 0; i < 5; i++ {
		sys.Root().Send(pid, &hwMark{N: i}) // nothing runs meanwhile: the manual executor
	}
	sys.RunUntilIdle()
	require.Equal(t, []int{0, 1}, got)
	for i := 2; i < 5; i++ {
		dl := testkit.ExpectEvent[*actor.DeadLetterEvent](deadLetters, 0)
		require.Equal(t, &hwMark{N: i}, dl.Message)
		require.ErrorIs(t, dl.Reason, actor.ErrMailboxFull)
	}
}

// Messages from one sender to one receiver arrive in the order sent (as in
// Hollywood), on the real multi-worker pool.
func TestHollywoodOrderPerSender(t *testing.T) {
	sys := testkit.NewSystem(t)
	const n = 10000
	done := make(chan []int, 1)
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*hwMark); ok {
			got = append(got, m.N)
			if len(got) == n {
				done <- got
			}
		}
	}))
	for i := 0; i < n; i++ {
		sys.Root().Send(pid, &hwMark{N: i})
	}
	select {
	case got := <-done:
		for i, v := range got {
			require.Equal(t, i, v)
		}
	case <-time.After(time.Minute):
		t.Fatal("not all messages arrived")
	}
}

// Hollywood runs each busy actor on a goroutine of its own, so a Receive
// that blocks holds only itself. fraktor-go runs actors on a fixed pool
// (SystemConfig.Workers): here one worker, one actor blocked in Receive, and
// another actor's request times out; the same blocking actor spawned
// WithBlocking runs on the blocking pool and the other answers.
func TestHollywoodBlockingReceiveHoldsAWorker(t *testing.T) {
	for _, blocking := range []bool{false, true} {
		t.Run(fmt.Sprintf("WithBlocking=%v", blocking), func(t *testing.T) {
			sys := testkit.NewSystem(t, testkit.WithConfig(actor.SystemConfig{Name: "hw", Workers: 1}))
			var opts []actor.PropsOption
			if blocking {
				opts = append(opts, actor.WithBlocking())
			}
			entered := make(chan struct{})
			blocker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if m, ok := c.Message().(*hwBlock); ok {
					close(entered)
					<-m.release
				}
			}, opts...))
			other := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*hwPing); ok {
					c.Respond(&hwPong{})
				}
			}))
			release := make(chan struct{})
			defer close(release)
			sys.Root().Send(blocker, &hwBlock{release: release})
			<-entered
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := actor.Request[*hwPong](ctx, sys.Root(), other, &hwPing{})
			if blocking {
				require.NoError(t, err)
			} else {
				require.True(t, errors.Is(err, actor.ErrTimeout), "err = %v", err)
			}
		})
	}
}
