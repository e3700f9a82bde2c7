package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// routerFunc is a cluster.GrainRouter made of a function.
type routerFunc func(*cluster.GrainCall)

func (f routerFunc) RouteGrain(c *cluster.GrainCall) { f(c) }

func detachedSystem(t *testing.T, r cluster.GrainRouter) *testkit.ManualSystem {
	return testkit.NewManualSystem(t, func(c *actor.SystemConfig) {
		c.Extensions = []actor.ExtensionInstaller{cluster.InstallDetached(r)}
	})
}

// TestDetachedRefusesAsARealCall: a detached cluster refuses what a real
// one refuses before any grain sees the call (an invalid identity, a nil
// message), with the same errors, for every kind of call; the router
// never sees them.
func TestDetachedRefusesAsARealCall(t *testing.T) {
	routed := 0
	sys := detachedSystem(t, routerFunc(func(*cluster.GrainCall) { routed++ }))
	c := cluster.Get(sys.System)
	ctx := context.Background()
	for _, tc := range []struct {
		id   cluster.Identity
		msg  any
		want error
	}{
		{cluster.Identity{Kind: "k"}, "x", cluster.ErrInvalidIdentity},
		{cluster.NewIdentity("k", "a"), nil, remote.ErrUnknownType},
	} {
		_, err1 := cluster.Request[string](ctx, c, tc.id, tc.msg)
		_, err2 := c.RequestFuture(tc.id, tc.msg, 0).Result()
		_, err3 := cluster.Call[string](ctx, c, tc.id, tc.msg)
		_, err4 := cluster.CallFuture(c, tc.id, tc.msg, 0).Result()
		for i, err := range []error{err1, err2, err3, err4} {
			if !errors.Is(err, tc.want) {
				t.Fatalf("%v %v call %d: %v, want %v", tc.id, tc.msg, i, err, tc.want)
			}
		}
		c.Send(tc.id, tc.msg)
	}
	if routed != 0 {
		t.Fatalf("the router got %d refused calls", routed)
	}
}

// TestDetachedAnswers: the router's answers reach each kind of call as a
// grain's would: a value, a typed call's *GrainError as its error (the
// untyped future gets it as the value a typed grain answered), a router
// panic as CodeInternal; a nil protobuf request of a typed call arrives
// empty, as over the wire.
func TestDetachedAnswers(t *testing.T) {
	var last *cluster.GrainCall
	answer := func(c *cluster.GrainCall) {}
	sys := detachedSystem(t, routerFunc(func(c *cluster.GrainCall) { last = c; answer(c) }))
	c := cluster.Get(sys.System)
	ctx := context.Background()
	id := cluster.NewIdentity("k", "a")

	answer = func(c *cluster.GrainCall) { c.Reply("pong") }
	if v, err := cluster.Request[string](ctx, c, id, "ping"); v != "pong" || err != nil {
		t.Fatalf("Request: %v, %v", v, err)
	}
	if v, err := c.RequestFuture(id, "ping", 0).Result(); v != "pong" || err != nil {
		t.Fatalf("RequestFuture: %v, %v", v, err)
	}

	ge := cluster.NewGrainError("nope", "no")
	answer = func(c *cluster.GrainCall) { c.Reply(ge) }
	if _, err := cluster.Call[*shopv1.Balance](ctx, c, id, (*shopv1.DepositRequest)(nil)); !errors.Is(err, ge) {
		t.Fatalf("Call: %v", err)
	}
	if m, ok := last.Message.(*shopv1.DepositRequest); !ok || m == nil {
		t.Fatalf("a nil request arrived as %#v, want an empty one", last.Message)
	}
	if _, err := cluster.CallFuture(c, id, &shopv1.DepositRequest{}, 0).Result(); !errors.Is(err, ge) {
		t.Fatalf("CallFuture: %v", err)
	}
	if v, err := c.RequestFuture(id, "ping", 0).Result(); v != ge || err != nil {
		t.Fatalf("RequestFuture of a GrainError: %v, %v", v, err)
	}

	answer = func(*cluster.GrainCall) { panic("router bug") }
	internal := &cluster.GrainError{Code: cluster.CodeInternal}
	_, err1 := cluster.Request[string](ctx, c, id, "ping")
	_, err2 := c.RequestFuture(id, "ping", 0).Result()
	_, err3 := cluster.Call[*shopv1.Balance](ctx, c, id, &shopv1.DepositRequest{})
	_, err4 := cluster.CallFuture(c, id, &shopv1.DepositRequest{}, 0).Result()
	for i, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, internal) {
			t.Fatalf("call %d with a panicking router: %v", i, err)
		}
	}
	c.Send(id, "ping") // the panic is contained
	if !last.OneWay() || last.Reply("x") || last.Fail(cluster.ErrTimeout) {
		t.Fatal("a Send took an answer")
	}
}

// TestDetachedTimeouts: a call nobody answers fails with ErrTimeout at its
// deadline: a future's on the system clock (virtual time here), a
// blocking one's at its ctx's; a late answer is not the answer.
func TestDetachedTimeouts(t *testing.T) {
	var held []*cluster.GrainCall
	sys := detachedSystem(t, routerFunc(func(c *cluster.GrainCall) { held = append(held, c) }))
	c := cluster.Get(sys.System)
	id := cluster.NewIdentity("k", "a")
	f := cluster.CallFuture(c, id, &shopv1.DepositRequest{}, time.Second)
	sys.Advance(999 * time.Millisecond)
	select {
	case <-f.Done():
		t.Fatal("the future failed before its timeout")
	default:
	}
	sys.Advance(time.Millisecond)
	if _, err := f.Result(); !errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("future: %v", err)
	}
	if held[0].Reply(&shopv1.Balance{}) {
		t.Fatal("an answer after the timeout counted")
	}
	// The router ends the blocking call's ctx while it waits: the call
	// fails with ErrTimeout, as a real one at its deadline.
	ctx, cancel := context.WithCancel(context.Background())
	held = nil
	routedCancel := routerFunc(func(*cluster.GrainCall) { cancel() })
	sys2 := detachedSystem(t, routedCancel)
	if _, err := cluster.Request[string](ctx, cluster.Get(sys2.System), id, "ping"); !errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("blocking: %v", err)
	}
}

// TestDetachedShutdownEndsCalls: Shutdown fails the calls still waiting
// with ErrShuttingDown, blocking and future ones, as a real cluster's
// Shutdown does; later calls are refused with it, and the status moves
// from Ready to Stopped.
func TestDetachedShutdownEndsCalls(t *testing.T) {
	var c *cluster.Cluster
	var future *actor.Future
	id := cluster.NewIdentity("k", "a")
	sys := detachedSystem(t, routerFunc(func(call *cluster.GrainCall) {
		if call.Message == "block" {
			// Shut down while the blocking call waits for its answer.
			if err := c.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown: %v", err)
			}
		}
	}))
	c = cluster.Get(sys.System)
	if c.Status() != cluster.StatusReady || c.Self().ID != "" || c.Members() != nil {
		t.Fatalf("detached: status %v, self %v, members %v", c.Status(), c.Self(), c.Members())
	}
	if err := c.WaitForMembers(context.Background(), 1); !errors.Is(err, cluster.ErrNotInstalled) {
		t.Fatalf("WaitForMembers: %v", err)
	}
	future = c.RequestFuture(id, "wait", time.Hour)
	if _, err := cluster.Request[string](context.Background(), c, id, "block"); !errors.Is(err, cluster.ErrShuttingDown) {
		t.Fatalf("blocking call at Shutdown: %v", err)
	}
	if _, err := future.Result(); !errors.Is(err, cluster.ErrShuttingDown) {
		t.Fatalf("future at Shutdown: %v", err)
	}
	if _, err := c.RequestFuture(id, "x", 0).Result(); !errors.Is(err, cluster.ErrShuttingDown) {
		t.Fatalf("future after Shutdown: %v", err)
	}
	if c.Status() != cluster.StatusStopped {
		t.Fatalf("status %v after Shutdown", c.Status())
	}
}

// TestInstallDetachedNeedsRouter: a detached cluster without a router is
// a config error, not a panic at the first call.
func TestInstallDetachedNeedsRouter(t *testing.T) {
	_, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{cluster.InstallDetached(nil)}})
	if !errors.Is(err, cluster.ErrInvalidConfig) {
		t.Fatalf("NewSystem: %v", err)
	}
}
