package testkit_test

import (
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// Messages of the order grain below.
type (
	placeOrder struct{ PayWithin time.Duration }
	payTimeout struct{}
)

// payByStore stands in for the order's storage: the payment deadline and
// the status, per order ID. (A real store lives outside the process.)
type payByStore map[string]struct {
	PayBy  time.Time
	Status string
}

// timedOrder is an order grain with an Orleans-style grain timer: a
// reserved order cancels itself when it is not paid in time. A timer lives
// as long as its activation (fraktor-go has no durable reminders), so the
// deadline is stored and every activation arms the timer again in Started,
// the counterpart of OnActivateAsync.
func timedOrder(st payByStore) cluster.Kind {
	return cluster.NewKind("order", actor.PropsFromFunc(func(c actor.Context) {
		id, _ := cluster.IdentityOf(c)
		now := c.System().Clock().Now()
		switch m := c.Message().(type) {
		case *actor.Started:
			if s, ok := st[id.ID]; ok && s.Status == "reserved" {
				c.Timers().StartSingle("pay", s.PayBy.Sub(now), &payTimeout{})
			}
		case *placeOrder:
			st[id.ID] = struct {
				PayBy  time.Time
				Status string
			}{now.Add(m.PayWithin), "reserved"}
			c.Timers().StartSingle("pay", m.PayWithin, &payTimeout{})
			c.Respond("reserved")
		case *payTimeout:
			s := st[id.ID]
			s.Status = "cancelled" // and release the stock: see docs/coming-from-orleans.md
			st[id.ID] = s
		}
	}))
}

// A grain timer in virtual time, and what stands in for a reminder: the
// order's timer dies with its activation (here a Reactivate, in a cluster a
// passivation, a move or a killed member), and the next activation arms it
// again from the stored deadline. Without the Started case the order would
// stay reserved forever.
func ExampleNewGrain_orleansTimer() {
	t := exampleT()
	defer t.finish()

	st := payByStore{}
	g := testkit.NewGrain(t, timedOrder(st), cluster.NewIdentity("order", "o1"))
	fmt.Println(testkit.RequestGrain[string](g, &placeOrder{PayWithin: 10 * time.Second}))

	g.Sys.Advance(4 * time.Second)
	g.Reactivate() // the activation ends, its timer with it; a new one starts
	g.Sys.Advance(5 * time.Second)
	fmt.Println(g.Sys.Elapsed(), st["o1"].Status, "token", g.Token)
	g.Sys.Advance(time.Second)
	fmt.Println(g.Sys.Elapsed(), st["o1"].Status)
	// Output:
	// reserved
	// 9s reserved token 1.2
	// 10s cancelled
}
