package actor_test

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/testkit"
)

// recorder sends every non-lifecycle message it handles to probe.
func recorder(probe *testkit.Probe) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started, *actor.Stopping, *actor.Restarting:
		case *actor.Stopped:
			c.Send(probe.PID(), "stopped")
		default:
			c.Send(probe.PID(), c.Message())
		}
	})
}

func TestWatchTerminated(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	probe.Watch(pid)
	sys.Root().Stop(pid)
	term := probe.ExpectTerminated(pid, 0)
	assert.Equal(t, actor.TerminatedStopped, term.Why)

	// Watching a PID that does not exist answers NotFound at once.
	ghost := actor.NewPID(actor.LocalAddress, "no-such-actor")
	probe.Watch(ghost)
	term = probe.ExpectTerminated(ghost, 0)
	assert.Equal(t, actor.TerminatedNotFound, term.Why)

	// Watching an actor that already stopped answers too.
	probe.Watch(pid)
	probe.ExpectTerminated(pid, 0)
}

func TestUnwatch(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	watcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "watch" {
				c.Watch(target)
			} else {
				c.Unwatch(target)
			}
			c.Respond("ok")
		case *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}))
	_, err := actor.Request[string](t.Context(), sys.Root(), watcher, "watch")
	require.NoError(t, err)
	_, err = actor.Request[string](t.Context(), sys.Root(), watcher, "unwatch")
	require.NoError(t, err)
	require.NoError(t, sys.Root().StopFuture(target).Wait())
	probe.ExpectNoMsg(20 * time.Millisecond)
}

// PoisonPill runs after the messages queued before it; Stop overtakes them
// and they become dead letters.
func TestPoisonVersusStop(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)

	start := sys.DeadLetters()
	poisoned := sys.Root().Spawn(recorder(probe))
	for i := 0; i < 3; i++ {
		sys.Root().Send(poisoned, &msgN{i})
	}
	sys.Root().Poison(poisoned)
	sys.Root().Send(poisoned, &msgN{99})
	for i := 0; i < 3; i++ {
		probe.ExpectMsgEqual(&msgN{i}, 0)
	}
	probe.ExpectMsgEqual("stopped", 0)
	probe.ExpectNoMsg(0)
	assert.Equal(t, start+1, sys.DeadLetters(), "the message after the poison pill")

	before := sys.DeadLetters()
	stopped := sys.Root().Spawn(recorder(probe))
	sys.RunUntilIdle()
	for i := 0; i < 3; i++ {
		sys.Root().Send(stopped, &msgN{i})
	}
	sys.Root().Stop(stopped)
	probe.ExpectMsgEqual("stopped", 0)
	probe.ExpectNoMsg(0)
	assert.Equal(t, before+3, sys.DeadLetters(), "the 3 queued messages")
}

func TestRequestTimeoutAndDeadLetter(t *testing.T) {
	sys := testkit.NewSystem(t)
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	_, err := actor.Request[string](ctx, sys.Root(), silent, "hello")
	require.ErrorIs(t, err, actor.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	_, err = sys.Root().RequestFuture(silent, "hello", 10*time.Millisecond).Result()
	require.ErrorIs(t, err, actor.ErrTimeout)

	require.NoError(t, sys.Root().StopFuture(silent).Wait())
	_, err = actor.Request[string](t.Context(), sys.Root(), silent, "hello")
	require.ErrorIs(t, err, actor.ErrDeadLetter)

	_, err = actor.Request[string](t.Context(), sys.Root(), actor.NewPID(actor.LocalAddress, "nobody"), "hello")
	require.ErrorIs(t, err, actor.ErrDeadLetter)
}

func TestRequestTypeMismatch(t *testing.T) {
	sys := testkit.NewSystem(t)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond(42)
		}
	}))
	_, err := actor.Request[string](t.Context(), sys.Root(), pid, "q")
	var tm *actor.TypeMismatchError
	require.ErrorAs(t, err, &tm)
	assert.Equal(t, 42, tm.Got)
}

func TestFuturePipeTo(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s + "!")
		}
	}))
	f := sys.Root().RequestFuture(echo, "hi", time.Second)
	f.PipeTo(probe.PID())
	probe.ExpectMsgEqual("hi!", 0)
	f.PipeTo(probe.PID()) // after completion: at once
	probe.ExpectMsgEqual("hi!", 0)
}

// ReceiveTimeout fires after d without messages; a message resets it.
func TestReceiveTimeout(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.SetReceiveTimeout(time.Second)
		case *actor.ReceiveTimeout:
			c.Send(probe.PID(), "timeout")
		case string:
			c.SetReceiveTimeout(0)
		}
	}))
	sys.Advance(999 * time.Millisecond)
	probe.ExpectNoMsg(0)
	sys.Advance(time.Millisecond)
	probe.ExpectMsgEqual("timeout", 0)
	sys.Advance(500 * time.Millisecond)
	sys.Root().Send(pid, &msgN{}) // activity resets the timer
	sys.Advance(999 * time.Millisecond)
	probe.ExpectNoMsg(0)
	sys.Advance(time.Millisecond)
	probe.ExpectMsgEqual("timeout", 0)
	sys.Root().Send(pid, "off")
	sys.Advance(time.Hour)
	probe.ExpectNoMsg(0)
}

// A restart turns the receive timeout off, as it cancels the actor's
// timers: the new instance reads 0 from ReceiveTimeout until it sets one.
// Before, the restart cancelled the pending timeout but left the setting,
// so the new instance read a timeout that never fired.
func TestReceiveTimeoutOffAfterRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var seen []time.Duration
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			seen = append(seen, c.ReceiveTimeout())
		case string:
			if m == "set" {
				c.SetReceiveTimeout(time.Second)
			} else {
				panic(m)
			}
		}
	}))
	sys.Root().Send(pid, "set")
	sys.Root().Send(pid, "boom")
	sys.RunUntilIdle()
	require.Equal(t, []time.Duration{0, 0}, seen, "Started of the first instance, then of the restarted one")
}

func TestStashUnstash(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *msgN:
			c.Stash()
		case string:
			if m == "open" {
				c.UnstashAll()
				c.Become(func(c actor.Context) {
					if n, ok := c.Message().(*msgN); ok {
						c.Send(probe.PID(), n.n)
					}
				})
			}
		}
	}))
	for i := 0; i < 3; i++ {
		sys.Root().Send(pid, &msgN{i})
	}
	sys.Root().Send(pid, "open")
	sys.Root().Send(pid, &msgN{3})
	for i := 0; i < 4; i++ {
		probe.ExpectMsgEqual(i, 0)
	}
}

func TestBehaviours(t *testing.T) {
	sys := testkit.NewSystem(t)
	var angry, calm actor.ReceiveFunc
	angry = func(c actor.Context) {
		switch c.Message() {
		case "calm down":
			c.UnbecomeStacked()
		case "hello":
			c.Respond("GRR")
		}
	}
	calm = func(c actor.Context) {
		switch c.Message() {
		case "provoke":
			c.BecomeStacked(angry)
		case "hello":
			c.Respond("hi")
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			c.Become(calm)
		}
	}))
	ask := func() string {
		s, err := actor.Request[string](t.Context(), sys.Root(), pid, "hello")
		require.NoError(t, err)
		return s
	}
	assert.Equal(t, "hi", ask())
	sys.Root().Send(pid, "provoke")
	assert.Equal(t, "GRR", ask())
	sys.Root().Send(pid, "calm down")
	assert.Equal(t, "hi", ask())
}

func TestSpawnNamedDuplicate(t *testing.T) {
	sys := testkit.NewSystem(t)
	props := actor.PropsFromFunc(func(actor.Context) {})
	pid, err := sys.Root().SpawnNamed(props, "unique")
	require.NoError(t, err)
	assert.Equal(t, "unique", pid.ID)
	_, err = sys.Root().SpawnNamed(props, "unique")
	require.ErrorIs(t, err, actor.ErrNameExists)
	require.NoError(t, sys.Root().StopFuture(pid).Wait())
	_, err = sys.Root().SpawnNamed(props, "unique")
	require.NoError(t, err, "the name is free again after the stop")
	p := sys.Root().SpawnPrefix(props, "worker-")
	assert.Contains(t, p.ID, "worker-$")
}

// Shutdown with busy actors stops everything, children before parents, and
// returns; later spawns fail with ErrSystemStopped.
func TestShutdownStopsChildrenFirst(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	var mu sync.Mutex
	var order []string
	record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
	var busy atomic.Int64
	started := make(chan struct{}, 3)
	childProps := actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			started <- struct{}{}
		case *actor.Stopped:
			record("child")
		case *msgN:
			busy.Add(1)
			c.Send(c.Self(), &msgN{}) // keeps itself busy forever
		}
	})
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			for i := 0; i < 3; i++ {
				c.Send(c.Spawn(childProps), &msgN{})
			}
		case *actor.Stopped:
			record("parent")
		}
	}))
	require.NotNil(t, parent)
	// Every child exists before Shutdown begins: a spawn after that fails
	// with ErrSystemStopped, and one busy child says nothing of the others.
	for range 3 {
		<-started
	}
	testkit.Eventually(t, func() bool { return busy.Load() > 100 }, 0)
	require.NoError(t, sys.Shutdown(t.Context()))
	require.NoError(t, sys.Shutdown(t.Context()), "idempotent")
	assert.Equal(t, []string{"child", "child", "child", "parent"}, order)
	_, err = sys.Root().SpawnNamed(childProps, "late")
	require.ErrorIs(t, err, actor.ErrSystemStopped)
	_, err = sys.Root().RequestFuture(parent, "x", time.Second).Result()
	require.ErrorIs(t, err, actor.ErrSystemStopped)
}

func TestBoundedMailbox(t *testing.T) {
	t.Run("DropNewest counts dead letters", func(t *testing.T) {
		sys := testkit.NewManualSystem(t)
		var got []int
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(*msgN); ok {
				got = append(got, m.n)
			}
		}, actor.WithBoundedMailbox(2, mailbox.DropNewest)))
		sys.RunUntilIdle()
		before := sys.DeadLetters()
		for i := 0; i < 5; i++ {
			sys.Root().Send(pid, &msgN{i})
		}
		sys.RunUntilIdle()
		assert.Equal(t, []int{0, 1}, got)
		assert.Equal(t, before+3, sys.DeadLetters())
	})
	t.Run("DropOldest keeps the newest", func(t *testing.T) {
		sys := testkit.NewManualSystem(t)
		var got []int
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(*msgN); ok {
				got = append(got, m.n)
			}
		}, actor.WithBoundedMailbox(2, mailbox.DropOldest)))
		sys.RunUntilIdle()
		for i := 0; i < 5; i++ {
			sys.Root().Send(pid, &msgN{i})
		}
		sys.RunUntilIdle()
		assert.Equal(t, []int{3, 4}, got)
	})
	t.Run("Reject fails the request", func(t *testing.T) {
		sys := testkit.NewManualSystem(t)
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}, actor.WithBoundedMailbox(1, mailbox.Reject)))
		sys.RunUntilIdle()
		sys.Root().Send(pid, &msgN{})
		_, err := sys.Root().RequestFuture(pid, &msgN{}, 0).Result()
		require.ErrorIs(t, err, actor.ErrMailboxFull)
	})
}

func TestPriorityMailbox(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []int
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(prio); ok {
			got = append(got, int(m))
		}
	}, actor.WithPriorityMailbox(3)))
	sys.RunUntilIdle()
	for _, p := range []prio{0, 2, 1, 2, 0} {
		sys.Root().Send(pid, p)
	}
	sys.RunUntilIdle()
	assert.Equal(t, []int{2, 2, 1, 0, 0}, got)
}

type prio int

func (p prio) Priority() int { return int(p) }

// badPrio's Priority panics (here on a nil pointer, a plain bug).
type badPrio struct{ level *int }

func (p badPrio) Priority() int { return *p.level }

// A message whose Priority panics is queued at level 0 instead: Priority
// runs on the sender's goroutine (a root caller, another actor, a
// connection's reader), which must not be the one to fail for it. Before,
// the panic went through Send to the sender.
func TestPriorityPanicIsLevelZero(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []any
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case prio, badPrio:
			got = append(got, c.Message())
		}
	}, actor.WithPriorityMailbox(3)))
	sys.RunUntilIdle()
	require.NotPanics(t, func() {
		sys.Root().Send(pid, prio(0))
		sys.Root().Send(pid, badPrio{})
		sys.Root().Send(pid, prio(1))
	})
	sys.RunUntilIdle()
	assert.Equal(t, []any{prio(1), prio(0), badPrio{}}, got)
}

func TestEventStream(t *testing.T) {
	sys := testkit.NewSystem(t)
	es := sys.EventStream()
	strs := testkit.NewEventProbe(t, sys, testkit.OfType[string]())
	es.Publish(42) // not a string: filtered
	es.Publish("a")
	assert.Equal(t, "a", testkit.ExpectEvent[string](strs, 0))
	strs.ExpectNoEvent(20 * time.Millisecond)

	n := es.Len()
	sub := actor.Subscribe(es, func(string) {})
	assert.Equal(t, n+1, es.Len())
	es.Unsubscribe(sub)
	es.Unsubscribe(sub) // idempotent
	assert.Equal(t, n, es.Len())

	// A slow subscriber never blocks the publisher: its events are dropped and counted.
	release := make(chan struct{})
	slow := es.Subscribe(func(any) { <-release })
	for i := 0; i < actor.DefaultSubscriptionBuffer+10; i++ {
		es.Publish(i)
	}
	assert.GreaterOrEqual(t, slow.Dropped(), uint64(9))
	close(release)
}

func TestDeadLetterEvent(t *testing.T) {
	sys := testkit.NewSystem(t)
	events := testkit.NewEventProbe(t, sys, testkit.OfType[*actor.DeadLetterEvent]())
	ghost := actor.NewPID(actor.LocalAddress, "ghost")
	sys.Root().Send(ghost, "hello?")
	e := testkit.ExpectEvent[*actor.DeadLetterEvent](events, 0)
	assert.True(t, e.PID.Equal(ghost))
	assert.Equal(t, "hello?", e.Message)
}

func TestReceiveMiddleware(t *testing.T) {
	sys := testkit.NewSystem(t)
	var seen []any
	var mu sync.Mutex
	logMW := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			mu.Lock()
			seen = append(seen, c.Message())
			mu.Unlock()
			next(c)
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	}, actor.WithReceiveMiddleware(logMW)))
	_, err := actor.Request[string](t.Context(), sys.Root(), pid, "x")
	require.NoError(t, err)
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, seen, 2)
	assert.IsType(t, &actor.Started{}, seen[0])
	assert.Equal(t, "x", seen[1])
}

func TestSendMiddleware(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	upper := func(next actor.SendFunc) actor.SendFunc {
		return func(c actor.Context, target *actor.PID, msg any, sender *actor.PID) {
			if s, ok := msg.(string); ok {
				msg = "[" + s + "]"
			}
			next(c, target, msg, sender)
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Send(probe.PID(), s)
		}
	}, actor.WithSendMiddleware(upper)))
	sys.Root().Send(pid, "x")
	probe.ExpectMsgEqual("[x]", 0)
}

func TestConfigValidate(t *testing.T) {
	_, err := actor.NewSystem(actor.SystemConfig{Workers: -1, Throughput: -2})
	require.ErrorIs(t, err, actor.ErrInvalidConfig)
	assert.Contains(t, err.Error(), "Workers")
	assert.Contains(t, err.Error(), "Throughput")
	// Past the bounds: a pool of 1<<40 workers ran out of memory, and a
	// subscription's channel of math.MaxInt slots panicked in Subscribe.
	for _, cfg := range []actor.SystemConfig{
		{Workers: 1 << 40}, {BlockingWorkers: actor.MaxWorkers + 1}, {EventBuffer: math.MaxInt},
	} {
		_, err = actor.NewSystem(cfg)
		require.ErrorIs(t, err, actor.ErrInvalidConfig, "%+v", cfg)
	}
}

func TestBlockingDispatcher(t *testing.T) {
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Workers = 1 })
	release := make(chan struct{})
	blocked := make(chan struct{})
	b := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			close(blocked)
			<-release // blocks its worker: must not be the shared one
		}
	}, actor.WithBlocking()))
	sys.Root().Send(b, "block")
	<-blocked
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*msgN); ok {
			c.Respond(1)
		}
	}))
	_, err := actor.Request[int](t.Context(), sys.Root(), echo, &msgN{})
	require.NoError(t, err, "the single shared worker is free")
	close(release)
}

// A child that stops under a live parent leaves it without a message to the
// parent; a parent that is stopping still waits for every child, including
// children stopping on their own at that same moment (S5).
func TestParentWaitsForChildrenStoppingConcurrently(t *testing.T) {
	sys := testkit.NewSystem(t)
	for round := 0; round < 200; round++ {
		var mu sync.Mutex
		var order []string
		record := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		kids := make(chan *actor.PID, 8)
		child := actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Stopped:
				record("child")
			case string:
				c.Stop(c.Self())
			}
		})
		parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Started:
				for i := 0; i < 8; i++ {
					kids <- c.Spawn(child)
				}
			case *actor.Stopped:
				record("parent")
			}
		}))
		for i := 0; i < 8; i++ {
			sys.Root().Send(<-kids, "stop yourself")
		}
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		_, err := sys.Root().StopFuture(parent).ResultContext(ctx)
		cancel()
		require.NoError(t, err, "round %d: the parent never finished stopping", round)
		mu.Lock()
		require.Len(t, order, 9, "round %d", round)
		require.Equal(t, "parent", order[8], "round %d: the parent stops last", round)
		mu.Unlock()
	}
}

// Children lists a child until it has stopped, and not after.
func TestChildrenAfterChildStops(t *testing.T) {
	sys := testkit.NewSystem(t)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case string:
			c.Respond(c.Spawn(actor.PropsFromFunc(func(actor.Context) {})))
		case int:
			c.Respond(len(c.Children()))
		}
	}))
	kid, err := actor.Request[*actor.PID](t.Context(), sys.Root(), parent, "spawn")
	require.NoError(t, err)
	n, err := actor.Request[int](t.Context(), sys.Root(), parent, 0)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.NoError(t, sys.Root().StopFuture(kid).Wait())
	n, err = actor.Request[int](t.Context(), sys.Root(), parent, 0)
	require.NoError(t, err)
	require.Zero(t, n)
}

// An actor that spawns from its Stopped handler (its children are already
// gone) gets ErrParentStopping and no PID, and the would-be child runs
// none of its code: it would otherwise outlive its parent, stopped by
// nobody.
func TestSpawnFromStoppedHandlerRefused(t *testing.T) {
	sys := testkit.NewSystem(t)
	errs := make(chan error, 1)
	lates := make(chan *actor.PID, 1)
	var childRan atomic.Bool
	child := actor.PropsFromFunc(func(actor.Context) { childRan.Store(true) })
	baseline := sys.ProcessCount()
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Stopped); ok {
			late, err := c.SpawnNamed(child, "late")
			lates <- late
			errs <- err
		}
	}))
	require.NoError(t, sys.Root().StopFuture(pid).Wait())
	require.ErrorIs(t, <-errs, actor.ErrParentStopping)
	require.Nil(t, <-lates, "a failed spawn returns no PID")
	testkit.Eventually(t, func() bool { return sys.ProcessCount() == baseline }, 0, "the refused child unregisters")
	require.False(t, childRan.Load(), "the refused child ran user code")
}

// Stash keeps user messages aside, not the runtime's lifecycle notices: an
// actor whose behaviour stashes everything it does not expect does not
// stash its Restarting (or Started, Stopping, Stopped). Before, the
// Restarting it stashed was put back ahead of the mailbox at the restart,
// and the new instance got its predecessor's Restarting after its own
// Started.
func TestStashSkipsLifecycleMessages(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var got []string
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			got = append(got, "started")
			c.Become(func(c actor.Context) { // wait for "ready", stash the rest
				switch m := c.Message().(type) {
				case string:
					if m == "boom" {
						panic(m)
					}
					if m == "ready" {
						c.UnstashAll()
						c.Become(func(c actor.Context) { got = append(got, fmt.Sprintf("%T", c.Message())) })
						return
					}
				}
				c.Stash()
			})
		case *actor.Restarting:
			got = append(got, "restarting")
		case string:
			got = append(got, m)
		}
	}))
	sys.Root().Send(pid, "early")
	sys.Root().Send(pid, "boom")
	sys.RunUntilIdle()
	require.Equal(t, []string{"started", "started"}, got, "the restarted instance got no Restarting")
	sys.Root().Send(pid, "ready")
	sys.RunUntilIdle()
	require.Equal(t, []string{"started", "started", "string"}, got, "its stash held \"early\" and no lifecycle message")
}
