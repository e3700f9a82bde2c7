package router_test

import (
	"errors"
	"sort"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

// Akka: a PoisonPill sent to a pool router stops the router and its
// routees, which may not handle what was routed to them before. Here the
// routees handle every message routed before the pill, then the router's
// watchers get Terminated with the router's PID.
func TestAkkaPoisonPoolAfterRoutedMessages(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pool, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(c actor.Context) {
		if n, ok := c.Message().(int); ok {
			c.Send(probe.PID(), n)
		}
	}), 2, router.RoundRobin())
	if err != nil {
		t.Fatal(err)
	}
	sys.RunUntilIdle()
	probe.Watch(pool)
	for i := 0; i < 6; i++ {
		sys.Root().Send(pool, i)
	}
	sys.Root().Poison(pool)
	var got []int
	for range 6 {
		got = append(got, testkit.ExpectMsg[int](probe, time.Second))
	}
	sort.Ints(got)
	for i, n := range got {
		if n != i {
			t.Fatalf("routed messages handled: %v", got)
		}
	}
	probe.ExpectTerminated(pool, time.Second)
}

// A pool routee that its strategy stops leaves the pool; with none left,
// a request fails at once with ErrNoRoutees (a dead letter).
func TestAkkaPoolRouteeStoppedLeaves(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pool, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "boom" {
			panic("boom")
		}
	}), 1, router.RoundRobin(), router.WithSupervisor(actor.OneForOne(0, time.Minute, actor.DefaultDecider)))
	if err != nil {
		t.Fatal(err)
	}
	sys.RunUntilIdle()
	sys.Root().Send(pool, "boom")
	sys.RunUntilIdle()
	f := sys.Root().RequestFuture(pool, "hi", time.Second)
	sys.RunUntilIdle()
	if _, err = f.Result(); !errors.Is(err, router.ErrNoRoutees) || !errors.Is(err, actor.ErrDeadLetter) {
		t.Fatalf("request to an empty pool: %v", err)
	}
	probe.Send(pool, &router.GetRoutees{})
	if r := testkit.ExpectMsg[*router.Routees](probe, time.Second); len(r.PIDs) != 0 {
		t.Fatalf("routees %v", r.PIDs)
	}
}
