package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Messages of the examples for Orleans users.
type (
	Begin struct{ Blocking bool }
	Ping  struct {
		RequestID string
		Deadline  time.Time // the caller's deadline, carried by hand
	}
	Pong struct{ Text string }
)

// startOrleansMember starts a one-member cluster with cfg's timing.
func startOrleansMember(ctx context.Context, reg cluster.Provider, tune func(*cluster.Config), kinds ...cluster.Kind) (*actor.System, *cluster.Cluster, error) {
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "shop"
	ccfg := cluster.Config{Provider: reg, Kinds: kinds}
	if tune != nil {
		tune(&ccfg)
	}
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(ccfg)}})
	if err != nil {
		return nil, nil, err
	}
	c := cluster.Get(sys)
	if err := c.WaitForMembers(ctx, 1); err != nil {
		_ = sys.Shutdown(ctx)
		return nil, nil, err
	}
	return sys, c, nil
}

// A call cycle, grain A → grain B → grain A. An Orleans grain (not
// [Reentrant]) awaiting B would not take B's call until its timeout. Here A
// calls B with a future and ReenterAfter: its turn ends, so it takes B's
// call meanwhile and the cycle completes. A that blocks its turn on
// cluster.Request instead holds B's call in its mailbox until its own
// call's deadline: a cycle of blocking calls ends in cluster.ErrTimeout,
// and its message does not mention the cycle.
func Example_orleansCallCycle() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	a := cluster.NewKind("a", actor.PropsFromFunc(func(c actor.Context) {
		b := cluster.NewIdentity("b", "1")
		switch m := c.Message().(type) {
		case *Begin:
			if m.Blocking { // never do this in a grain
				bctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
				defer cancel()
				_, err := cluster.Request[*Pong](bctx, cluster.Get(c.System()), b, &Ping{})
				c.Respond(&Pong{Text: fmt.Sprint("blocking: timeout=", errors.Is(err, cluster.ErrTimeout))})
				return
			}
			caller := c.Sender()
			c.ReenterAfter(cluster.Get(c.System()).RequestFuture(b, &Ping{}, 0), func(res any, err error) {
				if err != nil {
					c.Send(caller, &Pong{Text: err.Error()})
					return
				}
				c.Send(caller, &Pong{Text: "future: " + res.(*Pong).Text})
			})
		case *Ping:
			c.Respond(&Pong{Text: "A answered B"})
		}
	}))
	b := cluster.NewKind("b", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Ping); ok {
			caller := c.Sender()
			c.ReenterAfter(cluster.Get(c.System()).RequestFuture(cluster.NewIdentity("a", "1"), &Ping{}, 0),
				func(res any, err error) {
					if err == nil {
						c.Send(caller, res)
					}
				})
		}
	}))
	sys, c, err := startOrleansMember(ctx, reg, nil, a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()
	for _, blocking := range []bool{false, true} {
		r, err := cluster.Request[*Pong](ctx, c, cluster.NewIdentity("a", "1"), &Begin{Blocking: blocking})
		fmt.Println(r.Text, err)
	}
	// Output:
	// future: A answered B <nil>
	// blocking: timeout=true <nil>
}

// At-least-once under retries, and the idempotency it asks for. An attempt
// waits AttemptTimeout for the grain's reply; when that passes and the
// request's deadline has not, the request is sent again, also when the
// grain did receive it and only its reply was slow or lost (here the grain
// drops its first reply). Typed calls (cluster.Call, generated clients)
// retry alike. So a grain whose requests must apply once deduplicates them
// by an ID the caller chooses, as Orleans users do for its retries.
func Example_orleansIdempotentRetry() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	deliveries := 0
	stock := cluster.NewKind("product", actor.PropsFromProducer(func() actor.Actor {
		reserved := map[string]bool{} // request IDs applied
		units := 10
		return actor.ReceiveFunc(func(c actor.Context) {
			if m, ok := c.Message().(*Ping); ok {
				deliveries++
				if !reserved[m.RequestID] {
					reserved[m.RequestID] = true
					units--
				}
				if deliveries == 1 {
					return // the first reply is lost
				}
				c.Respond(&Pong{Text: fmt.Sprint(units, " units left")})
			}
		})
	}))
	sys, c, err := startOrleansMember(ctx, reg, func(cfg *cluster.Config) {
		cfg.AttemptTimeout = 200 * time.Millisecond // RequestTimeout stays 5 s
	}, stock)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()
	r, err := cluster.Request[*Pong](ctx, c, cluster.NewIdentity("product", "apple"), &Ping{RequestID: "order-7"})
	fmt.Println(r.Text, err)
	fmt.Println("deliveries:", deliveries)
	// Output:
	// 9 units left <nil>
	// deliveries: 2
}

// A request's deadline does not travel with it: inside the grain, a call to
// another grain has its own timeout (Config.RequestTimeout, 5 s, when none
// is given), and it goes on after the outer caller gave up. Orleans users
// who relied on call-chain cancellation carry the deadline in the message
// and bound the inner call by what is left of it.
func Example_orleansDeadline() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	innerEnded := make(chan time.Duration, 1)
	silent := cluster.NewKind("silent", actor.PropsFromFunc(func(actor.Context) {})) // never answers
	front := cluster.NewKind("front", actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Ping); ok {
			left := m.Deadline.Sub(c.System().Clock().Now()) // ≤ 0 would mean RequestTimeout
			f := cluster.Get(c.System()).RequestFuture(cluster.NewIdentity("silent", "1"), &Ping{}, left)
			c.ReenterAfter(f, func(_ any, err error) {
				innerEnded <- time.Until(m.Deadline)
			})
		}
	}))
	sys, c, err := startOrleansMember(ctx, reg, nil, silent, front)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()
	rctx, rcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer rcancel()
	deadline, _ := rctx.Deadline()
	_, err = cluster.Request[*Pong](rctx, c, cluster.NewIdentity("front", "1"), &Ping{Deadline: deadline})
	fmt.Println("caller:", errors.Is(err, cluster.ErrTimeout))
	fmt.Println("inner call ended within a second of the caller's deadline:", (<-innerEnded).Abs() < time.Second)
	// Output:
	// caller: true
	// inner call ended within a second of the caller's deadline: true
}
