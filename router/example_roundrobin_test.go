package router_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

// A round-robin pool (protoactor-go's router.NewRoundRobinPool): SpawnPool
// spawns the routees and returns the router's PID. Each message goes to the
// next routee in turn, and a routee answers the requester directly.
func ExampleRoundRobin() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer func() { _ = sys.Shutdown(context.Background()) }()

	worker := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond(c.Self().ID)
		}
	})
	pool, err := router.SpawnPool(sys.Root(), worker, 3, router.RoundRobin(), router.WithName("workers"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	perRoutee := map[string]int{}
	for range 6 {
		id, err := actor.Request[string](ctx, sys.Root(), pool, "job")
		if err != nil {
			fmt.Println(err)
			return
		}
		perRoutee[id]++
	}
	for _, n := range perRoutee {
		fmt.Print(n, " ")
	}
	fmt.Println("jobs on", len(perRoutee), "routees")
	// Output: 2 2 2 jobs on 3 routees
}
