package testkit_test

import (
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type greet struct{ Who string }

// A probe stands in for the other side of a conversation: it is the
// sender of a request and records the reply. (In a test, pass t; an example
// has no *testing.T, so exampleT stands in for it.)
func ExampleNewProbe() {
	t := exampleT()
	defer t.finish() // what the test's cleanup does: shutdown and leak check

	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	greeter := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*greet); ok {
			c.Respond("hello, " + m.Who)
		}
	}))

	probe.Send(greeter, &greet{Who: "probe"})
	reply := testkit.ExpectMsg[string](probe, time.Second)
	fmt.Println(reply, "from the greeter:", probe.Sender().Equal(greeter))
	probe.ExpectNoMsg(10 * time.Millisecond)
	// Output: hello, probe from the greeter: true
}

// In deterministic mode nothing runs until the test says so and time is
// virtual: a receive timeout of a minute fires when the test advances the
// clock by a minute, at once, on every run alike.
func ExampleNewManualSystem() {
	t := exampleT()
	defer t.finish()

	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.SetReceiveTimeout(time.Minute)
		case *actor.ReceiveTimeout:
			c.Send(probe.PID(), "idle")
		}
	}))

	sys.Advance(59 * time.Second)
	probe.ExpectNoMsg(0)
	sys.Advance(time.Second)
	probe.ExpectMsgEqual("idle", 0)
	fmt.Println("idle after", sys.Elapsed())

	// A timeout is virtual too: the wait stops at the next idle message.
	testkit.ExpectMsg[string](probe, time.Hour)
	fmt.Println("idle again after", sys.Elapsed())
	// Output:
	// idle after 1m0s
	// idle again after 2m0s
}

// An EventProbe asserts on what is published on the EventStream, here the
// dead letter of a message sent to an actor that does not exist.
func ExampleNewEventProbe() {
	t := exampleT()
	defer t.finish()

	sys := testkit.NewManualSystem(t)
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.DeadLetterEvent]())
	sys.Root().Send(actor.NewPID(actor.LocalAddress, "nobody"), "hello?")

	dl := testkit.ExpectEvent[*actor.DeadLetterEvent](events, 0)
	fmt.Println(dl.PID, dl.Message)
	// Output: local/nobody hello?
}
