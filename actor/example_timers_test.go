package actor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// A keyed periodic timer: the actor counts its own ticks and cancels the
// timer after three.
func ExampleTimers() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	done := make(chan struct{})
	n := 0
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Timers().StartPeriodic("beat", time.Millisecond, "tick")
		case string:
			n++
			fmt.Println("tick", n)
			if n == 3 {
				c.Timers().Cancel("beat")
				close(done)
			}
		}
	}))
	<-done
	// Output:
	// tick 1
	// tick 2
	// tick 3
}

// ReenterAfter: the actor asks another and handles the answer on its own
// turn, where it may touch its state.
func ExampleContext_ReenterAfter() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond("echo " + s)
		}
	}))
	done := make(chan struct{})
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			answers := 0 // actor state
			c.ReenterAfter(c.RequestFuture(echo, "hi", time.Second), func(res any, err error) {
				answers++
				fmt.Println(res, err, answers)
				close(done)
			})
		}
	}))
	<-done
	// Output: echo hi <nil> 1
}

// A spawn middleware that counts spawns, for every actor of the system.
func ExampleSpawnMiddleware() {
	spawned := 0
	count := func(next actor.SpawnFunc) actor.SpawnFunc {
		return func(info actor.SpawnInfo, props *actor.Props) (*actor.PID, error) {
			pid, err := next(info, props)
			if err == nil {
				spawned++ // root spawns only here: one goroutine
			}
			return pid, err
		}
	}
	sys, _ := actor.NewSystem(actor.SystemConfig{SpawnMiddleware: []actor.SpawnMiddleware{count}})
	defer sys.Shutdown(context.Background())
	sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	fmt.Println("spawned", spawned)
	// Output: spawned 2
}
