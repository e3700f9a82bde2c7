package router_test

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

// reading is routed by device ID: Akka's ConsistentHashableEnvelope /
// hashMapping becomes a HashKey method on the message.
type reading struct {
	Device string
	Value  float64
}

func (r *reading) HashKey() string { return r.Device }

// Akka's ConsistentHashingPool: the same key always reaches the same
// routee, so per-device state can live in one routee without locks.
func ExampleConsistentHash() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer func() { _ = sys.Shutdown(context.Background()) }()

	shard := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*reading); ok {
			c.Respond(c.Self().ID) // which routee handled it
		}
	})
	pool, err := router.SpawnPool(sys.Root(), shard, 4, router.ConsistentHash(), router.WithName("shards"))
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	owner := map[string]map[string]bool{} // device → routees that got it
	for i := range 30 {
		dev := fmt.Sprintf("dev-%d", i%3)
		id, err := actor.Request[string](ctx, sys.Root(), pool, &reading{Device: dev, Value: float64(i)})
		if err != nil {
			panic(err)
		}
		if owner[dev] == nil {
			owner[dev] = map[string]bool{}
		}
		owner[dev][id] = true
	}
	for _, dev := range []string{"dev-0", "dev-1", "dev-2"} {
		fmt.Println(dev, "handled by", len(owner[dev]), "routee")
	}
	// A message without a key is a dead letter, never a random pick.
	_, err = actor.Request[string](ctx, sys.Root(), pool, "no key")
	fmt.Println(err)
	// Output:
	// dev-0 handled by 1 routee
	// dev-1 handled by 1 routee
	// dev-2 handled by 1 routee
	// actor: dead letter: router: message has no hash key
}

// Akka's BroadcastGroup over actors you own (group routers route to
// existing PIDs, local or remote, and do not stop them). Any router also
// takes router.BroadcastMessage, Akka's Broadcast envelope.
func ExampleBroadcast() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer func() { _ = sys.Shutdown(context.Background()) }()

	got := make(chan string, 8)
	display := func(name string) *actor.PID {
		return sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(string); ok {
				got <- name + ": " + m
			}
		}))
	}
	displays := []*actor.PID{display("lobby"), display("hall"), display("gate")}
	group, err := router.SpawnGroup(sys.Root(), router.Broadcast(), displays)
	if err != nil {
		panic(err)
	}
	sys.Root().Send(group, "fire drill at 10:00")
	var lines []string
	for range displays {
		lines = append(lines, <-got)
	}
	sort.Strings(lines)
	for _, l := range lines {
		fmt.Println(l)
	}

	// A round-robin group: BroadcastMessage still reaches every routee.
	rr, _ := router.SpawnGroup(sys.Root(), router.RoundRobin(), displays)
	sys.Root().Send(rr, &router.BroadcastMessage{Message: "all clear"})
	lines = lines[:0]
	for range displays {
		lines = append(lines, <-got)
	}
	sort.Strings(lines)
	fmt.Println(lines)

	// Stopping a group leaves its routees running.
	_ = sys.Root().StopFuture(group).Wait()
	_ = sys.Root().StopFuture(rr).Wait()
	sys.Root().Send(displays[0], "still here")
	fmt.Println(<-got)
	// Output:
	// gate: fire drill at 10:00
	// hall: fire drill at 10:00
	// lobby: fire drill at 10:00
	// [gate: all clear hall: all clear lobby: all clear]
	// lobby: still here
}

// A routee of a pool is supervised by the router's WithSupervisor strategy
// (Akka's pool supervisorStrategy): a panicking routee is restarted and
// stays in the pool under the same PID.
func ExampleWithSupervisor() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer func() { _ = sys.Shutdown(context.Background()) }()

	worker := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "crash" {
				panic("worker bug")
			}
			c.Respond("ok " + m)
		}
	})
	pool, _ := router.SpawnPool(sys.Root(), worker, 1, router.RoundRobin(),
		router.WithSupervisor(actor.OneForOne(5, time.Minute, actor.DefaultDecider)))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	before, _ := actor.Request[*router.Routees](ctx, sys.Root(), pool, &router.GetRoutees{})
	sys.Root().Send(pool, "crash")
	answer, err := actor.Request[string](ctx, sys.Root(), pool, "job")
	after, _ := actor.Request[*router.Routees](ctx, sys.Root(), pool, &router.GetRoutees{})
	fmt.Println(answer, err, before.PIDs[0].Equal(after.PIDs[0]))
	// Output: ok job <nil> true
}
