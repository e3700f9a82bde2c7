package testkit_test

import (
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	startPolling struct{}
	stopPolling  struct{}
	poll         struct{}
)

// Akka's TestProbe and ManualTime in one test: a poller with a periodic
// timer (Akka's timers.startTimerAtFixedRate) reports to a probe; the
// virtual clock moves only on Advance, so three periods take no time. The
// timer is cancelled when the poller restarts (Akka cancels an actor's
// timers on restart too), and the probe's watch sees the poller stop.
func ExampleManualSystem_Advance() {
	t := exampleT()
	defer t.finish()

	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	poller := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *startPolling:
			c.Timers().StartPeriodic("poll", 10*time.Second, &poll{})
		case *poll:
			c.Send(probe.PID(), fmt.Sprintf("poll at %v", sys.Elapsed()))
		case *stopPolling:
			panic("restart me") // the default strategy restarts it
		}
	}))
	probe.Watch(poller)
	sys.Root().Send(poller, &startPolling{})
	sys.Advance(30 * time.Second)
	for range 3 {
		fmt.Println(testkit.ExpectMsg[string](probe, 0))
	}
	sys.Root().Send(poller, &stopPolling{})
	sys.Advance(time.Hour)
	probe.ExpectNoMsg(0) // the restart cancelled the timer
	sys.Root().Poison(poller)
	fmt.Println("terminated:", probe.ExpectTerminated(poller, 0).Why)
	// Output:
	// poll at 10s
	// poll at 20s
	// poll at 30s
	// terminated: Stopped
}

// Akka's fishForMessage and expectNoMessage: FishForMsg skips what does not
// match; ExpectNoMsg on a manual system waits in virtual time, so it costs
// nothing and cannot be flaky.
func ExampleFishForMsg() {
	t := exampleT()
	defer t.finish()

	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	counter := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if n, ok := c.Message().(int); ok {
			for i := 1; i <= n; i++ {
				c.Respond(i)
			}
		}
	}))
	probe.Send(counter, 5)
	got := testkit.FishForMsg(probe, func(i int) bool { return i%4 == 0 }, time.Second)
	fmt.Println("fished", got, "then", testkit.ExpectMsg[int](probe, 0))
	probe.ExpectNoMsg(time.Minute)
	fmt.Println("virtual time spent waiting:", sys.Elapsed())
	// Output:
	// fished 4 then 5
	// virtual time spent waiting: 1m0s
}

// The manual scheduler runs one invocation per Step, in the same order on
// every run: a test can stop between two turns and look (Akka has no
// counterpart; CallingThreadDispatcher is the nearest).
func ExampleManualSystem_Step() {
	t := exampleT()
	defer t.finish()

	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Send(probe.PID(), s)
		}
	}))
	sys.Root().Send(echo, "a")
	sys.Root().Send(echo, "b")
	fmt.Println("before any step:", probe.Len())
	for sys.Step() {
	}
	fmt.Println("after the steps:", probe.Len())
	probe.ExpectMsgEqual("a", 0)
	probe.ExpectMsgEqual("b", 0)
	// Output:
	// before any step: 0
	// after the steps: 2
}
