package main

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Messages of the local program. Locally any Go value is a message: nothing
// to register, no protobuf.
type (
	Add   struct{ N int }
	Get   struct{}
	Crash struct{ Why string }
	Slow  struct{ Release chan struct{} }
)

// ActorRestarted is a user event the counter publishes from its Restarting
// notice, with the reason it keeps: fraktor-go's EventStream carries no
// start or stop events, and a supervisor's decision is an
// *actor.SupervisionEvent (Hollywood's ActorRestartedEvent and
// ActorMaxRestartsExceededEvent), which the program waits for below.
type ActorRestarted struct {
	PID    *actor.PID
	Reason string
}

// newCounter is Hollywood's producer: a fresh instance at spawn and at every
// restart, so n starts over after a failure.
func newCounter() actor.Actor {
	n := 0
	var last string
	return actor.ReceiveFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			fmt.Printf("  [%s] started\n", c.Self().ID)
		case *Add:
			n += m.N
		case *Get:
			c.Respond(n)
		case *Crash:
			last = m.Why
			panic(m.Why)
		case *Slow:
			<-m.Release // blocks one worker of the shared pool (see the doc)
		case *actor.Restarting:
			c.System().EventStream().Publish(&ActorRestarted{PID: c.Self(), Reason: last})
		case *actor.Stopped:
			fmt.Printf("  [%s] stopped\n", c.Self().ID)
		}
	})
}

// countMessages is Hollywood's WithMiddleware: it wraps every delivery.
func countMessages(counter *atomic.Int64) actor.ReceiveMiddleware {
	return func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if _, ok := c.Message().(*Add); ok {
				counter.Add(1)
			}
			next(c)
		}
	}
}

// runLocal ports a Hollywood local app: a supervised actor restarted after
// panics until its restart budget is spent, request/response with a timeout,
// the event stream with a monitor actor, middleware, Poison.
func runLocal() error {
	sys, err := actor.NewSystem(actor.SystemConfig{
		Name: "local",
		// Hollywood: actor.WithMaxRestarts(3) on the spawn. Here the parent
		// decides; for top-level actors the parent is the user guardian.
		GuardianStrategy: actor.OneForOne(3, time.Hour, actor.DefaultDecider),
	})
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())

	// engine.Subscribe(monitorPID): here a function on a goroutine of its
	// own; it forwards to an actor to keep Hollywood's shape.
	events := make(chan string, 16)
	monitor := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch e := c.Message().(type) {
		case *ActorRestarted:
			events <- fmt.Sprintf("restarted %s (%s)", e.PID.ID, e.Reason)
		case *actor.DeadLetterEvent:
			events <- fmt.Sprintf("dead letter to %s: %T", e.PID.ID, e.Message)
		}
	}))
	// The supervisor's decision to stop the counter (its fourth failure):
	// Hollywood's ActorMaxRestartsExceededEvent.
	gaveUp := make(chan struct{}, 1)
	sub := sys.EventStream().Subscribe(func(ev any) {
		switch e := ev.(type) {
		case *ActorRestarted, *actor.DeadLetterEvent:
			sys.Root().Send(monitor, ev)
		case *actor.SupervisionEvent:
			if e.Directive == actor.StopDirective {
				select {
				case gaveUp <- struct{}{}:
				default:
				}
			}
		}
	})
	defer sys.EventStream().Unsubscribe(sub)

	var adds atomic.Int64
	props := actor.PropsFromProducer(newCounter, actor.WithReceiveMiddleware(countMessages(&adds)))
	// engine.Spawn(newCounter, "counter"): the name is the whole ID here
	// (Hollywood's PID would be "counter/<id>").
	pid, err := sys.Root().SpawnNamed(props, "counter")
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	fmt.Println("1. request/response")
	sys.Root().Send(pid, &Add{N: 5})
	// engine.Request(pid, &Get{}, 500*time.Millisecond).Result()
	n, err := sys.Root().RequestFuture(pid, &Get{}, 500*time.Millisecond).Result()
	fmt.Printf("  get = %v (err %v)\n", n, err)

	fmt.Println("2. a panic restarts the actor with a fresh instance")
	sys.Root().Send(pid, &Crash{Why: "boom 1"})
	fmt.Printf("  event: %s\n", <-events)
	got, err := actor.Request[int](ctx, sys.Root(), pid, &Get{})
	fmt.Printf("  get after restart = %d (err %v)\n", got, err)

	fmt.Println("3. a request to a busy actor times out")
	// Send, not RequestFuture: a request whose future is not yet awaited
	// can make the next Result run this blocking message on the caller's
	// goroutine, and that Result then ignores its timeout
	// (TestNewuser9ResultTimeoutNotHeldByAnotherRequestsMessage).
	release := make(chan struct{})
	sys.Root().Send(pid, &Slow{Release: release})
	_, err = sys.Root().RequestFuture(pid, &Get{}, 50*time.Millisecond).Result()
	fmt.Printf("  timed out: %v (%v)\n", errors.Is(err, actor.ErrTimeout), err)
	close(release)
	got, err = actor.Request[int](ctx, sys.Root(), pid, &Get{})
	fmt.Printf("  get once released = %d (err %v)\n", got, err)

	fmt.Println("4. more than 3 restarts: the actor is stopped")
	for i := 2; i <= 4; i++ {
		sys.Root().Send(pid, &Crash{Why: fmt.Sprintf("boom %d", i)})
	}
	for i := 2; i <= 3; i++ {
		fmt.Printf("  event: %s\n", <-events)
	}
	// The fourth failure's decision: a Stop right after the third restart
	// could overtake the fourth Crash (a system message comes first), and
	// that Crash would be a dead letter instead.
	<-gaveUp
	if err := sys.Root().StopFuture(pid).Wait(); err != nil { // already stopping: completes when it has
		return err
	}
	_, err = actor.Request[int](ctx, sys.Root(), pid, &Get{})
	fmt.Printf("  request to the stopped actor: dead letter %v\n", errors.Is(err, actor.ErrDeadLetter))
	fmt.Printf("  event: %s\n", <-events)
	sys.Root().Send(pid, &Add{N: 1})
	fmt.Printf("  event: %s\n", <-events)

	fmt.Println("5. Poison handles what was queued first")
	pid2, err := sys.Root().SpawnNamed(props, "counter-2")
	if err != nil {
		return err
	}
	for i := 0; i < 100; i++ {
		sys.Root().Send(pid2, &Add{N: 1})
	}
	if err := sys.Root().PoisonFuture(pid2).Wait(); err != nil { // engine.Poison(pid).Wait()
		return err
	}
	fmt.Printf("  the middleware saw %d Add messages\n", adds.Load())
	return nil
}
