package actor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// A Shutdown whose context ends before an actor has stopped returns an
// error and the stop goes on; Terminated closes once it has ended, and a
// later Shutdown with more time waits for it.
func ExampleSystem_Terminated() {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	if err != nil {
		panic(err)
	}
	inside, release := make(chan struct{}), make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			close(inside)
			<-release // a slow Receive
		}
	}))
	sys.Root().Send(pid, "work")
	<-inside

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	fmt.Println(sys.Shutdown(ctx) != nil) // the actor is still in Receive

	close(release)
	// Either wait on the channel (in a select with a deadline, if need be)…
	<-sys.Terminated()
	// …or call Shutdown again, which returns nil once the system has ended.
	fmt.Println(sys.Shutdown(context.Background()))
	// Output:
	// true
	// <nil>
}
