package actor_test

// What an Akka/Pekko developer relies on, checked against fraktor-go's
// public API (docs/coming-from-akka.md cites these tests).

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// logRec is an ordered, goroutine-safe log of lifecycle events.
type logRec struct {
	mu  sync.Mutex
	log []string
}

func (l *logRec) add(s string) { l.mu.Lock(); l.log = append(l.log, s); l.mu.Unlock() }
func (l *logRec) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.log, " ")
}

func lifecycleName(m any) string {
	switch m.(type) {
	case *actor.Started:
		return "Started"
	case *actor.Stopping:
		return "Stopping"
	case *actor.Stopped:
		return "Stopped"
	case *actor.Restarting:
		return "Restarting"
	}
	return ""
}

// Akka: a child is stopped (its postStop has run) before its parent's
// postStop. Here: the child's Stopped comes before the parent's Stopped, and
// the parent's Stopping comes first.
func TestAkkaChildStoppedBeforeParentPostStop(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	var l logRec
	child := actor.PropsFromFunc(func(c actor.Context) {
		if n := lifecycleName(c.Message()); n != "" {
			l.add("child:" + n)
		}
	})
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			c.Spawn(child)
		}
		if n := lifecycleName(c.Message()); n != "" {
			l.add("parent:" + n)
		}
	}))
	sys.RunUntilIdle()
	f := sys.Root().StopFuture(parent)
	sys.RunUntilIdle()
	if err := f.Wait(); err != nil {
		t.Fatal(err)
	}
	want := "parent:Started child:Started parent:Stopping child:Stopping child:Stopped parent:Stopped"
	if got := l.String(); got != want {
		t.Fatalf("lifecycle order\n got %s\nwant %s", got, want)
	}
}

// Akka: on restart the old instance gets preRestart (children stopped by
// default), the new one postRestart → preStart. Here: Restarting to the old
// instance, the children stopped, then Started to a fresh instance from the
// producer; the messages queued behind the failing one stay in the mailbox.
func TestAkkaRestartHooksAndMailboxKept(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	var l logRec
	gen := 0
	child := actor.PropsFromFunc(func(c actor.Context) {
		if n := lifecycleName(c.Message()); n != "" {
			l.add("child:" + n)
		}
	})
	pid := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		gen++
		me := gen
		return actor.ReceiveFunc(func(c actor.Context) {
			if n := lifecycleName(c.Message()); n != "" {
				l.add(fmt.Sprintf("i%d:%s", me, n))
				if n == "Started" {
					c.Spawn(child)
				}
				return
			}
			switch m := c.Message().(type) {
			case string:
				if m == "boom" {
					panic("boom")
				}
				c.Send(probe.PID(), fmt.Sprintf("i%d:%s", me, m))
			}
		})
	}))
	for _, m := range []string{"a", "boom", "b", "c"} {
		sys.Root().Send(pid, m)
	}
	probe.ExpectMsgEqual("i1:a", 0)
	probe.ExpectMsgEqual("i2:b", 0)
	probe.ExpectMsgEqual("i2:c", 0)
	want := "i1:Started child:Started i1:Restarting child:Stopping child:Stopped i2:Started child:Started"
	if got := l.String(); got != want {
		t.Fatalf("restart order\n got %s\nwant %s", got, want)
	}
}

// Akka's stash is kept across a restart only by the default preRestart's
// unstashAll (it is prepended to the mailbox). Here: the stash is re-queued
// ahead of the mailbox at a restart (docs/actors.md, "Stash and Become").
func TestAkkaStashSurvivesRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case int:
			if c.ReceiveTimeout() == 0 { // not "ready": stash
				c.Stash()
				return
			}
			c.Send(probe.PID(), m)
		case string:
			switch m {
			case "boom":
				panic("boom")
			case "ready":
				c.SetReceiveTimeout(time.Hour)
				c.UnstashAll()
			}
		}
	}))
	sys.Root().Send(pid, 1)
	sys.Root().Send(pid, 2)
	sys.Root().Send(pid, "boom")
	sys.Root().Send(pid, "ready")
	// After the restart the stash (1, 2) is queued ahead of "ready": the
	// new instance, not ready, stashes them again; "ready" unstashes them.
	probe.ExpectMsgEqual(1, 0)
	probe.ExpectMsgEqual(2, 0)
}

// Akka: at most one Terminated per watch, even when watch is called twice.
func TestAkkaTerminatedExactlyOnce(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(target)
			c.Watch(target)
			c.Stop(target)
		case *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}))
	term := testkit.ExpectMsg[*actor.Terminated](probe, 0)
	if !term.Who.Equal(target) || term.Why != actor.TerminatedStopped {
		t.Fatalf("got %v %v", term.Who, term.Why)
	}
	probe.ExpectNoMsg(time.Minute)
}

// Akka: Terminated arrives after every message the watched actor sent to
// the watcher before it stopped (also from its postStop).
func TestAkkaTerminatedAfterTheDeadActorsLastMessages(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	for round := 0; round < 50; round++ {
		var watcher *actor.PID
		ready := make(chan *actor.PID, 1)
		watcher = sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.PID:
				c.Watch(m)
				c.Send(m, "go")
			case string, *actor.Terminated:
				c.Send(probe.PID(), m)
			}
		}))
		w := watcher
		target := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case string:
				for i := 0; i < 20; i++ {
					c.Send(w, fmt.Sprint(i))
				}
				c.Stop(c.Self())
			case *actor.Stopped:
				c.Send(w, "from Stopped")
			}
		}))
		_ = ready
		sys.Root().Send(watcher, target)
		for i := 0; i < 20; i++ {
			probe.ExpectMsgEqual(fmt.Sprint(i), time.Second)
		}
		probe.ExpectMsgEqual("from Stopped", time.Second)
		testkit.ExpectMsg[*actor.Terminated](probe, time.Second)
		sys.Root().Stop(watcher)
	}
}

// Akka: messages from one sender to one receiver keep their order.
func TestAkkaOrderPerSenderReceiverPair(t *testing.T) {
	sys := testkit.NewSystem(t)
	const senders, n = 4, 2000
	type msg struct{ from, seq int }
	done := make(chan error, 1)
	last := make([]int, senders)
	for i := range last {
		last[i] = -1
	}
	count := 0
	recv := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(msg); ok {
			if m.seq != last[m.from]+1 {
				done <- fmt.Errorf("sender %d: %d after %d", m.from, m.seq, last[m.from])
				return
			}
			last[m.from] = m.seq
			if count++; count == senders*n {
				done <- nil
			}
		}
	}))
	for s := 0; s < senders; s++ {
		s := s
		sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*actor.Started); ok {
				for i := 0; i < n; i++ {
					c.Send(recv, msg{s, i})
				}
			}
		}))
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// Akka: a PoisonPill is handled after the messages queued before it.
func TestAkkaPoisonPillAfterQueuedMessages(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(int); ok {
			c.Send(probe.PID(), m)
		}
	}))
	probe.Watch(pid)
	for i := 0; i < 3; i++ {
		sys.Root().Send(pid, i)
	}
	sys.Root().Send(pid, &actor.PoisonPill{})
	sys.Root().Send(pid, 99) // after the pill: a dead letter
	for i := 0; i < 3; i++ {
		probe.ExpectMsgEqual(i, 0)
	}
	probe.ExpectTerminated(pid, 0)
}

// Akka's ask: an AskTimeoutException after the timeout; to a dead actor
// the ask also times out (the message goes to deadLetters). Here a request
// to a PID with no actor fails at once with ErrDeadLetter, and one the
// actor does not answer with ErrTimeout.
func TestAkkaAskTimeoutVersusDeadLetter(t *testing.T) {
	sys := testkit.NewSystem(t)
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := actor.Request[string](ctx, sys.Root(), silent, "hello?")
	if !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("silent actor: %v", err)
	}
	start := time.Now()
	_, err = actor.Request[string](context.Background(), sys.Root(), actor.NewPID(sys.Address(), "nobody"), "hello?")
	if !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("no actor: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("dead letter took %v", d)
	}
	// RequestFuture's timeout: ErrTimeout too.
	_, err = sys.Root().RequestFuture(silent, "x", 10*time.Millisecond).Result()
	if !errors.Is(err, actor.ErrTimeout) {
		t.Fatalf("future: %v", err)
	}
}
