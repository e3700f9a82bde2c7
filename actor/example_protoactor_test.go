package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// The receive timeout comes again every d while the actor stays idle (in
// protoactor-go it comes once): turn it off, or stop, when it has done its
// work. Every message that reaches Receive starts the wait over.
func ExampleContext_SetReceiveTimeout() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	done := make(chan struct{})
	n := 0
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.SetReceiveTimeout(10 * time.Millisecond)
		case *actor.ReceiveTimeout:
			n++
			fmt.Println("idle", n)
			if n == 2 {
				c.SetReceiveTimeout(0) // no more ReceiveTimeout
				close(done)
			}
		}
	}))
	<-done
	// Output:
	// idle 1
	// idle 2
}

// An actor that must not wait for an answer pipes the future to itself: the
// answer arrives as a message, and a failure (here the future's timeout) as
// the error value itself.
func ExampleFuture_PipeTo() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	prices := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if item, ok := c.Message().(string); ok && item != "unobtainium" {
			c.Respond(len(item)) // no answer for unobtainium
		}
	}))
	done := make(chan struct{})
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.RequestFuture(prices, "apple", time.Second).PipeTo(c.Self())
		case int:
			fmt.Println("price", m)
			c.RequestFuture(prices, "unobtainium", 20*time.Millisecond).PipeTo(c.Self())
		case error:
			fmt.Println("failed:", m, errors.Is(m, actor.ErrTimeout))
			close(done)
		}
	}))
	<-done
	// Output:
	// price 5
	// failed: actor: timeout true
}

// Dead letters are published on the EventStream as *actor.DeadLetterEvent;
// actor.Subscribe filters by type. A subscriber runs on a goroutine of its
// own, not on the publisher's.
func ExampleSubscribe() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	got := make(chan *actor.DeadLetterEvent, 1)
	sub := actor.Subscribe(sys.EventStream(), func(ev *actor.DeadLetterEvent) {
		select {
		case got <- ev:
		default:
		}
	})
	defer sys.EventStream().Unsubscribe(sub)

	pid, _ := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "gone")
	_ = sys.Root().StopFuture(pid).Wait()
	sys.Root().Send(pid, "anyone there?")
	ev := <-got
	fmt.Println(ev.PID.ID, ev.Message)
	// Output: gone anyone there?
}

// Poison stops an actor after the messages queued before it; Stop after
// the message it is handling, and the queued ones become dead letters.
func ExampleRootContext_Poison() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())
	lost := make(chan any, 8)
	sub := actor.Subscribe(sys.EventStream(), func(ev *actor.DeadLetterEvent) {
		select {
		case lost <- ev.Message:
		default:
		}
	})
	defer sys.EventStream().Unsubscribe(sub)

	entered, gate := make(chan struct{}), make(chan struct{})
	props := actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(string); ok {
			if m == "wait" {
				close(entered)
				<-gate
				return
			}
			fmt.Println("handled", m)
		}
	})

	a := sys.Root().Spawn(props)
	sys.Root().Send(a, "a1")
	sys.Root().Send(a, "a2")
	_ = sys.Root().PoisonFuture(a).Wait()

	b := sys.Root().Spawn(props)
	sys.Root().Send(b, "wait")
	sys.Root().Send(b, "b1")
	<-entered
	stopped := sys.Root().StopFuture(b)
	close(gate)
	_ = stopped.Wait()
	fmt.Println("dead letter:", <-lost)
	// Output:
	// handled a1
	// handled a2
	// dead letter: b1
}

// A parent hears of a child's end only when it watches it (protoactor-go
// tells every parent). Watching a PID that does not exist answers at once.
func ExampleContext_Watch() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	done := make(chan struct{})
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(actor.NewPID(c.Self().Address, "nobody"))
		case *actor.Terminated:
			fmt.Println("terminated:", m.Why)
			if m.Why == actor.TerminatedNotFound {
				child := c.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
				c.Watch(child)
				c.Stop(child)
				return
			}
			close(done)
		}
	}))
	<-done
	// Output:
	// terminated: NotFound
	// terminated: Stopped
}

// A decider sees a panic as a *actor.PanicError holding the panic's value;
// when the value is an error, errors.Is and errors.As reach it.
func ExampleDecider() {
	errBadInput := errors.New("bad input")
	decided := make(chan string, 1)
	decider := func(err error) actor.Directive {
		var pe *actor.PanicError
		switch {
		case errors.Is(err, errBadInput):
			decided <- "resume: " + err.Error()
			return actor.ResumeDirective
		case errors.As(err, &pe):
			decided <- fmt.Sprintf("restart: panic(%v)", pe.Value)
			return actor.RestartDirective
		}
		return actor.StopDirective
	}
	sys, _ := actor.NewSystem(actor.SystemConfig{GuardianStrategy: actor.OneForOne(3, time.Minute, decider)})
	defer sys.Shutdown(context.Background())

	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case error:
			panic(m)
		case string:
			panic(m)
		}
	}))
	sys.Root().Send(pid, errBadInput)
	fmt.Println(<-decided)
	sys.Root().Send(pid, "oops")
	fmt.Println(<-decided)
	// Output:
	// resume: actor: panic in Receive: bad input
	// restart: panic(oops)
}
