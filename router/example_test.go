package router_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
)

type order struct{ customer string }

// HashKey keeps each customer's orders on one routee.
func (o *order) HashKey() string { return o.customer }

func Example() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer func() { _ = sys.Shutdown(context.Background()) }()

	worker := actor.PropsFromFunc(func(c actor.Context) {
		if o, ok := c.Message().(*order); ok {
			c.Respond("handled order of " + o.customer)
		}
	})
	pool, err := router.SpawnPool(sys.Root(), worker, 4, router.ConsistentHash(), router.WithName("orders"))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	reply, _ := actor.Request[string](ctx, sys.Root(), pool, &order{customer: "ada"})
	fmt.Println(reply)

	routees, _ := actor.Request[*router.Routees](ctx, sys.Root(), pool, &router.Resize{Size: 6})
	fmt.Println("routees:", len(routees.PIDs))
	// Output:
	// handled order of ada
	// routees: 6
}
