package actor_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka: at stop, what is stashed goes to dead letters (not lost).
func TestAkkaStashedMessagesAtStopAreDeadLetters(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(int); ok {
			c.Stash()
		}
	}))
	sys.Root().Send(pid, 1)
	sys.Root().Send(pid, 2)
	sys.RunUntilIdle()
	f := sys.Root().StopFuture(pid)
	sys.RunUntilIdle()
	_ = f.Wait()
	a := testkit.ExpectEvent[*actor.DeadLetterEvent](events, time.Second)
	b := testkit.ExpectEvent[*actor.DeadLetterEvent](events, time.Second)
	if a.Message != 1 || b.Message != 2 {
		t.Fatalf("dead letters %v %v", a.Message, b.Message)
	}
}

// Akka: a stashed request keeps its sender: unstashed, Respond answers the asker.
func TestAkkaStashKeepsSender(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "open" {
				c.Become(func(c actor.Context) {
					if s, ok := c.Message().(string); ok {
						c.Respond("re:" + s)
					}
				})
				c.UnstashAll()
				return
			}
			c.Stash()
		}
	}))
	probe.Send(pid, "q1")
	sys.Root().Send(pid, "open")
	probe.ExpectMsgEqual("re:q1", 0)
	if !probe.Sender().Equal(pid) {
		t.Fatalf("sender %v", probe.Sender())
	}
}

// A panic in Stopped (Akka postStop throwing: logged, the actor is stopped).
func TestAkkaPanicInPostStop(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Stopped); ok {
			panic("postStop bug")
		}
	}))
	probe.Watch(pid)
	sys.Root().Stop(pid)
	probe.ExpectTerminated(pid, time.Second)
}

// A panic in Restarting (Akka preRestart throwing: logged, restart goes on).
func TestAkkaPanicInPreRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Restarting:
			panic("preRestart bug")
		case string:
			if m == "boom" {
				panic("boom")
			}
			c.Send(probe.PID(), m)
		}
	}))
	sys.Root().Send(pid, "boom")
	sys.Root().Send(pid, "after")
	probe.ExpectMsgEqual("after", time.Second)
}

// PipeTo a PID that is gone: the result is a dead letter.
func TestAkkaPipeToDeadActor(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	f := sys.Root().NewFuture(0)
	f.PipeTo(actor.NewPID(sys.Address(), "gone"))
	f.Complete("result", nil)
	dl := testkit.ExpectEvent[*actor.DeadLetterEvent](events, time.Second)
	if dl.Message != "result" {
		t.Fatalf("dead letter %v", dl.Message)
	}
}

// Unwatch then stop: no Terminated.
func TestAkkaUnwatch(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(target)
			c.Unwatch(target)
			c.Stop(target)
			c.Send(probe.PID(), "done")
		case *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}))
	probe.ExpectMsgEqual("done", 0)
	probe.ExpectNoMsg(time.Second)
}

// Timer SendAfter to another actor cancelled by a restart of its owner.
func TestAkkaSendAfterCancelledOnRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "arm" {
				c.SendAfter(time.Second, probe.PID(), "late")
			}
			if m == "boom" {
				panic("x")
			}
		}
	}))
	sys.Root().Send(pid, "arm")
	sys.Root().Send(pid, "boom")
	sys.RunUntilIdle()
	probe.ExpectNoMsg(5 * time.Second)
}

// Unwatch drops a Terminated already in the watcher's mailbox (Akka's
// unwatch guarantees the same). The watcher blocks on purpose to let the
// Terminated queue up, so it runs WithBlocking (a blocking Receive on the
// shared pool strands the actors it sends to: see
// TestBlockingReceiveWithBlockingDoesNotStrand).
func TestAkkaUnwatchDropsQueuedTerminated(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	entered, gate := make(chan struct{}), make(chan struct{})
	watcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			switch m {
			case "watch":
				c.Watch(target)
			case "wait":
				close(entered)
				<-gate
			case "unwatch":
				c.Unwatch(target)
				c.Send(probe.PID(), "unwatched")
			}
		case *actor.Terminated:
			c.Send(probe.PID(), m)
		}
	}, actor.WithBlocking()))
	sys.Root().Send(watcher, "watch")
	sys.Root().Send(watcher, "wait")
	<-entered
	sys.Root().Send(watcher, "unwatch")
	if err := sys.Root().StopFuture(target).Wait(); err != nil {
		t.Fatal(err)
	}
	// The Terminated is queued behind "unwatch".
	close(gate)
	probe.ExpectMsgEqual("unwatched", time.Second)
	probe.ExpectNoMsg(100 * time.Millisecond)
}
