package actor_test

// Supervision as an Akka/Pekko developer uses it (docs/coming-from-akka.md).

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// crasher reports its lifecycle and panics on "boom".
func crasher(name string, out *actor.PID) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		if n := lifecycleName(c.Message()); n != "" {
			c.Send(out, name+":"+n)
			return
		}
		if m, ok := c.Message().(string); ok {
			if m == "boom" {
				panic(name + " failed")
			}
			c.Send(out, name+":"+m)
		}
	})
}

// Akka AllForOneStrategy: every sibling is restarted when one fails.
func TestAkkaAllForOneRestartsSiblings(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	kids := make(chan []*actor.PID, 1)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			a, _ := c.SpawnNamed(crasher("a", probe.PID()), "a")
			b, _ := c.SpawnNamed(crasher("b", probe.PID()), "b")
			kids <- []*actor.PID{a, b}
		}
	}, actor.WithSupervisor(actor.AllForOne(3, time.Minute, actor.DefaultDecider))))
	sys.RunUntilIdle()
	k := <-kids
	probe.ExpectMsgEqual("a:Started", 0)
	probe.ExpectMsgEqual("b:Started", 0)
	sys.Root().Send(k[0], "boom")
	got := map[string]int{}
	for i := 0; i < 4; i++ {
		got[testkit.ExpectMsg[string](probe, 0)]++
	}
	for _, w := range []string{"a:Restarting", "a:Started", "b:Restarting", "b:Started"} {
		if got[w] != 1 {
			t.Fatalf("want %s once, got %v", w, got)
		}
	}
	// Same PIDs after the restart.
	sys.Root().Send(k[1], "hi")
	probe.ExpectMsgEqual("b:hi", 0)
}

// Akka maxNrOfRetries/withinTimeRange: the child is stopped when it fails
// more than maxNrOfRetries times within the window; failures spread wider
// than the window restart it for ever.
func TestAkkaMaxRetriesWithinWindow(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.OneForOne(2, time.Minute, actor.DefaultDecider)))
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(crasher("c", probe.PID()))
	probe.Watch(pid)
	probe.ExpectMsgEqual("c:Started", 0)
	// Spread out: three failures, each more than a minute apart: restarted.
	for i := 0; i < 3; i++ {
		sys.Root().Send(pid, "boom")
		probe.ExpectMsgEqual("c:Restarting", 0)
		probe.ExpectMsgEqual("c:Started", 0)
		sys.Advance(61 * time.Second)
	}
	// Three within the window: the third (more than 2 restarts) stops it.
	for i := 0; i < 2; i++ {
		sys.Root().Send(pid, "boom")
		probe.ExpectMsgEqual("c:Restarting", 0)
		probe.ExpectMsgEqual("c:Started", 0)
	}
	sys.Root().Send(pid, "boom")
	probe.ExpectMsgEqual("c:Stopping", 0)
	probe.ExpectMsgEqual("c:Stopped", 0)
	probe.ExpectTerminated(pid, 0)
}

// Akka Escalate: the parent fails with the child's error and the
// grandparent decides; a restarted parent restarts its children (Akka's
// default preRestart stops them and preStart makes new ones).
func TestAkkaEscalate(t *testing.T) {
	errDisk := errors.New("disk gone")
	decided := make(chan error, 4)
	grandDecider := func(err error) actor.Directive {
		decided <- err
		return actor.RestartDirective
	}
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.OneForOne(5, time.Minute, grandDecider)))
	probe := testkit.NewManualProbe(t, sys)
	childPID := make(chan *actor.PID, 4)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Send(probe.PID(), "parent:Started")
			childPID <- c.Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(string); ok {
					panic(errDisk)
				}
			}))
		case *actor.Restarting:
			c.Send(probe.PID(), "parent:Restarting")
		}
	}, actor.WithSupervisor(actor.OneForOne(5, time.Minute, func(error) actor.Directive { return actor.EscalateDirective }))))
	probe.ExpectMsgEqual("parent:Started", 0)
	first := <-childPID
	probe.Watch(first)
	sys.Root().Send(first, "go")
	probe.ExpectMsgEqual("parent:Restarting", 0)
	// The child is stopped when the parent restarts...
	probe.ExpectTerminated(first, 0)
	probe.ExpectMsgEqual("parent:Started", 0)
	// ... the grandparent saw the child's error ...
	err := <-decided
	if !errors.Is(err, errDisk) {
		t.Fatalf("escalated error %v does not reach errDisk", err)
	}
	// ... and the new parent spawned a new child.
	if second := <-childPID; second.Equal(first) {
		t.Fatalf("same child PID after the parent's restart")
	}
	_ = parent
}

// Akka BackoffSupervisor / RestartSource: restarts after growing delays.
// Here ExponentialBackoff: 100 ms, 200 ms, 400 ms ... in virtual time.
func TestAkkaBackoffRestartInVirtualTime(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.ExponentialBackoff()))
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Send(probe.PID(), sys.Elapsed())
			panic("cannot connect")
		}
	}))
	_ = pid
	var at []time.Duration
	for i := 0; i < 4; i++ {
		at = append(at, testkit.ExpectMsg[time.Duration](probe, time.Minute))
	}
	want := []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, 700 * time.Millisecond}
	if fmt.Sprint(at) != fmt.Sprint(want) {
		t.Fatalf("restarts at %v, want %v", at, want)
	}
}

// Akka: timers of TimerScheduler are cancelled when the actor restarts.
func TestAkkaTimersCancelledOnRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	gen := 0
	pid := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		gen++
		me := gen
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				if me == 1 {
					c.Timers().StartPeriodic("tick", time.Second, "tick")
					c.Timers().StartSingle("once", 5*time.Second, "once")
				}
			case string:
				switch m {
				case "boom":
					panic("boom")
				default:
					c.Send(probe.PID(), fmt.Sprintf("i%d:%s", me, m))
				}
			}
		})
	}))
	sys.Advance(time.Second)
	probe.ExpectMsgEqual("i1:tick", 0)
	sys.Root().Send(pid, "boom")
	sys.Advance(10 * time.Second)
	probe.ExpectNoMsg(0)
}

// A panic in the Started handler (Akka's preStart throwing
// ActorInitializationException, which stops the actor by default) is a
// failure like any other here: the default strategy restarts it, and after
// more than 10 restarts within 10 s, stops it.
func TestAkkaPanicInPreStart(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	starts := 0
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			starts++
			panic("no config")
		}
	}))
	probe.Watch(pid)
	probe.ExpectTerminated(pid, time.Minute)
	if starts != 11 {
		t.Fatalf("started %d times, want 11 (1 + 10 restarts)", starts)
	}
}

// A panic in a receive middleware is the actor's failure (supervised).
func TestAkkaPanicInReceiveMiddleware(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	mw := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if c.Message() == "poison-mw" {
				panic("middleware bug")
			}
			next(c)
		}
	}
	pid := sys.Root().Spawn(crasher("m", probe.PID()).With(actor.WithReceiveMiddleware(mw)))
	probe.ExpectMsgEqual("m:Started", 0)
	sys.Root().Send(pid, "poison-mw")
	probe.ExpectMsgEqual("m:Restarting", 0)
	probe.ExpectMsgEqual("m:Started", 0)
	sys.Root().Send(pid, "after")
	probe.ExpectMsgEqual("m:after", 0)
}

// A panic in a send middleware: the sender's failure.
func TestAkkaPanicInSendMiddleware(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	mw := func(next actor.SendFunc) actor.SendFunc {
		return func(c actor.Context, target *actor.PID, msg any, sender *actor.PID) {
			if msg == "m:bad" {
				panic("send middleware bug")
			}
			next(c, target, msg, sender)
		}
	}
	pid := sys.Root().Spawn(crasher("m", probe.PID()).With(actor.WithSendMiddleware(mw)))
	probe.ExpectMsgEqual("m:Started", 0)
	sys.Root().Send(pid, "bad")
	probe.ExpectMsgEqual("m:Restarting", 0)
	probe.ExpectMsgEqual("m:Started", 0)
}

// AllForOne past its limit: every child is stopped, not only the one that
// failed.
func TestAkkaAllForOneLimitStopsAll(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	kids := make(chan []*actor.PID, 1)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			a, _ := c.SpawnNamed(crasher("a", probe.PID()), "a")
			b, _ := c.SpawnNamed(crasher("b", probe.PID()), "b")
			kids <- []*actor.PID{a, b}
		}
	}, actor.WithSupervisor(actor.AllForOne(1, time.Minute, actor.DefaultDecider))))
	sys.RunUntilIdle()
	k := <-kids
	w := testkit.NewManualProbe(t, sys)
	w.Watch(k[0])
	w.Watch(k[1])
	sys.Root().Send(k[0], "boom") // restart number 1: within the limit
	sys.RunUntilIdle()
	sys.Root().Send(k[0], "boom") // restart number 2: over it
	got := map[string]bool{}
	for range 2 {
		got[testkit.ExpectMsg[*actor.Terminated](w, time.Second).Who.ID] = true
	}
	if !got[k[0].ID] || !got[k[1].ID] {
		t.Fatalf("stopped: %v", got)
	}
}
