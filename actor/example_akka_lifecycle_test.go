package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Akka's hooks map to messages: preStart → *actor.Started, preRestart →
// *actor.Restarting (to the failed instance), postRestart + preStart →
// *actor.Started (to the fresh one), postStop → *actor.Stopped, with
// *actor.Stopping before the children stop. On a restart the children are
// stopped; on a stop they are stopped before the parent's Stopped. The
// messages queued behind the one that failed stay in the mailbox.
func Example_akkaLifecycleHooks() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	events := make(chan string, 64)
	hooks := func(who string) func(c actor.Context) bool {
		return func(c actor.Context) bool {
			if n := lifecycleName(c.Message()); n != "" {
				events <- who + " " + n
				return true
			}
			return false
		}
	}
	child := actor.PropsFromFunc(func(c actor.Context) { hooks("  child")(c) })
	generation := 0
	parent := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		generation++
		me := fmt.Sprintf("parent#%d", generation)
		return actor.ReceiveFunc(func(c actor.Context) {
			if hooks(me)(c) {
				if _, ok := c.Message().(*actor.Started); ok {
					c.Spawn(child)
				}
				return
			}
			switch m := c.Message().(type) {
			case string:
				if m == "boom" {
					panic("boom")
				}
				events <- me + " got " + m
			}
		})
	}))
	next := func(n int) { // prints the next n events
		for range n {
			fmt.Println(<-events)
		}
	}
	next(2) // the parent's Started, then its child's
	sys.Root().Send(parent, "boom")
	sys.Root().Send(parent, "queued behind the failure")
	next(4) // the restart: the old instance, its child stopped, the new one
	// The new child's Started and the queued message run concurrently (two
	// actors): print them in a fixed order.
	a, b := <-events, <-events
	if a > b {
		a, b = b, a
	}
	fmt.Println(a)
	fmt.Println(b)
	_ = sys.Root().StopFuture(parent).Wait()
	close(events)
	for e := range events {
		fmt.Println(e)
	}
	// Output:
	// parent#1 Started
	//   child Started
	// parent#1 Restarting
	//   child Stopping
	//   child Stopped
	// parent#2 Started
	//   child Started
	// parent#2 got queued behind the failure
	// parent#2 Stopping
	//   child Stopping
	//   child Stopped
	// parent#2 Stopped
}

type (
	connect   struct{}
	connected struct{}
	query     struct{ Q string }
)

// Akka's Stash with become/unbecome: while "connecting" the actor stashes
// queries; once connected it unstashes them (ahead of the mailbox, in
// order, each with its original sender) and becomes "online". A restart
// returns to Receive and re-queues the stash (docs/actors.md).
func ExampleContext_Stash() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	online := func(c actor.Context) {
		if q, ok := c.Message().(*query); ok {
			c.Respond("result of " + q.Q)
		}
	}
	connecting := func(c actor.Context) {
		switch c.Message().(type) {
		case *query:
			c.Stash()
		case *connected:
			c.UnstashAll()
			c.Become(online)
		}
	}
	db := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*connect); ok {
			c.Become(connecting)
			c.SendAfter(10*time.Millisecond, c.Self(), &connected{})
		}
	}))
	sys.Root().Send(db, &connect{})
	a := sys.Root().RequestFuture(db, &query{Q: "a"}, time.Second)
	b := sys.Root().RequestFuture(db, &query{Q: "b"}, time.Second)
	for _, f := range []*actor.Future{a, b} {
		res, err := f.Result()
		fmt.Println(res, err)
	}
	// Output:
	// result of a <nil>
	// result of b <nil>
}

// Akka's AllForOneStrategy: when one child fails, every child gets the
// directive. maxRestarts within the window: a child restarted more often is
// stopped instead (and, with AllForOne, all of them are).
func ExampleAllForOne() {
	errBadSensor := errors.New("bad sensor")
	restarted := make(chan string, 8)
	sensor := func(name string) *actor.Props {
		return actor.PropsFromFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Restarting:
				restarted <- name
			case string:
				panic(errBadSensor)
			}
		})
	}
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())
	kids := make(chan *actor.PID, 2)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			kids <- c.Spawn(sensor("pressure"))
			c.Spawn(sensor("flow"))
		}
	}, actor.WithSupervisor(actor.AllForOne(3, time.Minute, func(err error) actor.Directive {
		if errors.Is(err, errBadSensor) {
			return actor.RestartDirective
		}
		return actor.EscalateDirective
	}))))
	sys.Root().Send(<-kids, "read")
	got := map[string]bool{<-restarted: true, <-restarted: true}
	fmt.Println("restarted:", got["pressure"], got["flow"])
	// Output: restarted: true true
}

// The ask pattern: actor.Request (or RequestFuture) is Akka's ask. A target
// that never answers ends in actor.ErrTimeout at the deadline; a PID with
// no actor fails at once with actor.ErrDeadLetter (Akka's ask would wait
// for its timeout). Inside an actor, PipeTo sends the answer, or the error
// value, to the actor as a message (Akka's pipeTo sends a Status.Failure).
func ExampleRequest_akkaAsk() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := actor.Request[string](ctx, sys.Root(), silent, "anyone?")
	fmt.Println("silent:", errors.Is(err, actor.ErrTimeout))
	_, err = actor.Request[string](context.Background(), sys.Root(), actor.NewPID(sys.Address(), "nobody"), "anyone?")
	fmt.Println("no actor:", errors.Is(err, actor.ErrDeadLetter))
	// The wrong reply type is a typed error, not a panic.
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(string); ok {
			c.Respond(m)
		}
	}))
	_, err = actor.Request[int](context.Background(), sys.Root(), echo, "not an int")
	var tm *actor.TypeMismatchError
	fmt.Println("type mismatch:", errors.As(err, &tm))
	// Output:
	// silent: true
	// no actor: true
	// type mismatch: true
}

// Akka's dead-letter listener actor (eventStream.subscribe(listener,
// classOf[DeadLetter])): a subscription is a function on a goroutine of its
// own, so an actor that wants the events subscribes a function that sends
// them to it, and unsubscribes in Stopped (Akka unsubscribes a stopped
// actor for you; here the subscription would outlive it).
func ExampleEventStream_akkaDeadLetterListener() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	out := make(chan string, 4)
	listener := sys.Root().Spawn(actor.PropsFromProducer(func() actor.Actor {
		var sub *actor.Subscription
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				self, root := c.Self(), c.System().Root()
				sub = actor.Subscribe(c.System().EventStream(), func(dl *actor.DeadLetterEvent) {
					root.Send(self, dl)
				})
				out <- "listening"
			case *actor.DeadLetterEvent:
				out <- fmt.Sprintf("dead letter to %s: %v", m.PID.ID, m.Message)
			case *actor.Stopped:
				c.System().EventStream().Unsubscribe(sub)
			}
		})
	}))
	fmt.Println(<-out)
	sys.Root().Send(actor.NewPID(sys.Address(), "device-gone"), "reading 21.5")
	fmt.Println(<-out)
	_ = sys.Root().StopFuture(listener).Wait()
	// Output:
	// listening
	// dead letter to device-gone: reading 21.5
}
