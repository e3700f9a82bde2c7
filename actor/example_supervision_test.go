package actor_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

var errFatal = errors.New("unrecoverable")

// backoffThenStop restarts a failed child after the runtime's exponential
// backoff (Failure.RetryAfter: 100 ms, 200 ms, …), stops it after more than
// max failures in a row, and stops it at once on errFatal.
type backoffThenStop struct{ max int }

func (s backoffThenStop) HandleFailure(sup actor.Supervisor, f actor.Failure) {
	if errors.Is(f.Err, errFatal) || f.Consecutive > s.max {
		sup.StopChildren(f.Child)
		return
	}
	sup.RestartChildrenAfter(f.RetryAfter, f.Child)
}

type crash struct{}

// ExponentialBackoff never gives up; this strategy backs off as it does and
// stops the child after its third failure in a row.
func ExampleSupervisorStrategy_backoffThenStop() {
	sys, _ := actor.NewSystem(actor.SystemConfig{GuardianStrategy: backoffThenStop{max: 2}})
	defer sys.Shutdown(context.Background())

	started := make(chan struct{}, 4)
	worker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			started <- struct{}{}
		case *crash:
			panic("bug")
		}
	}))
	<-started
	watching, stopped := make(chan struct{}), make(chan *actor.Terminated, 1)
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(worker)
			close(watching)
		case *actor.Terminated:
			stopped <- m
		}
	}))
	<-watching
	for i := 1; i <= 3; i++ {
		sys.Root().Send(worker, &crash{})
		if i <= 2 {
			<-started // restarted after 100 ms, then 200 ms
			fmt.Println("failure", i, "restarted")
		}
	}
	select {
	case t := <-stopped:
		fmt.Println("failure 3:", t.Why)
	case <-time.After(5 * time.Second): // ExponentialBackoff() would end here
		fmt.Println("failure 3: still restarting")
	}
	// Output:
	// failure 1 restarted
	// failure 2 restarted
	// failure 3: Stopped
}

// Every supervision decision is published on the EventStream: here the
// default strategy restarts a failed top-level actor, and a subscriber is
// told which actor failed, why, and what was done.
func ExampleSupervisionEvent() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	decisions := make(chan *actor.SupervisionEvent, 1)
	sub := actor.Subscribe(sys.EventStream(), func(ev *actor.SupervisionEvent) { decisions <- ev })
	defer sys.EventStream().Unsubscribe(sub)

	worker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*crash); ok {
			panic("bug")
		}
	}))
	sys.Root().Send(worker, &crash{})
	ev := <-decisions
	fmt.Println(ev.Child.Equal(worker), ev.Directive, ev.Consecutive, ev.Err)
	// Output: true Restart 1 actor: panic in Receive: bug
}
