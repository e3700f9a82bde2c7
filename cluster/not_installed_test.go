package cluster_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestNilClusterFailsWithErrNotInstalled: every exported method of the nil
// *Cluster that Get returns on a system without a cluster fails with
// ErrNotInstalled or answers its zero value, and the futures have failed
// with it at once; a generated client on it surfaces it too. Each of them
// panicked on the nil receiver before (a grain calling another grain
// failed with CodeInternal).
func TestNilClusterFailsWithErrNotInstalled(t *testing.T) {
	sys := testkit.NewSystem(t)
	c := cluster.Get(sys)
	if c != nil {
		t.Fatal("Get found a cluster on a system without one")
	}
	ctx := context.Background()
	id := cluster.NewIdentity("k", "a")
	futures := map[string]*actor.Future{
		"RequestFuture": c.RequestFuture(id, "x", 0),
		"CallFuture":    cluster.CallFuture(c, id, &shopv1.DepositRequest{}, 0),
		"client future": shopv1.NewAccountClient(c, "a").DepositFuture(&shopv1.DepositRequest{}, 0),
	}
	for name, f := range futures {
		select {
		case <-f.Done():
		default:
			t.Fatalf("%s: the future has not completed", name)
		}
		if _, err := f.Result(); !errors.Is(err, cluster.ErrNotInstalled) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	errs := map[string]error{
		"WaitForMembers": c.WaitForMembers(ctx, 1),
		"Shutdown":       c.Shutdown(ctx),
		"Register":       cluster.NewGrainMessages().Register(c),
	}
	_, errs["Request"] = cluster.Request[string](ctx, c, id, "x")
	_, errs["Call"] = cluster.Call[*shopv1.Balance](ctx, c, id, &shopv1.DepositRequest{})
	_, errs["client"] = shopv1.NewAccountClient(c, "a").Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 1}})
	for name, err := range errs {
		if !errors.Is(err, cluster.ErrNotInstalled) {
			t.Fatalf("%s: %v", name, err)
		}
	}
	c.Send(id, "x") // dropped
	if c.Status() != cluster.StatusStopped || c.Self().ID != "" || c.Members() != nil || c.IdentityLookup() != nil ||
		c.PidCache() != nil || c.ActiveCount() != 0 || len(c.ActiveCountByKind()) != 0 ||
		c.Lease() != (cluster.MembershipLease{}) || c.System() != nil {
		t.Fatal("a nil Cluster answered more than its zero values")
	}
	if _, ok := c.Topology(); ok {
		t.Fatal("a nil Cluster has a topology")
	}
}

// TestNilClusterFuturePipesError: the failed future of a nil Cluster
// pipes ErrNotInstalled to the grain, as a real call's error would be:
// the grain learns that the call failed instead of crashing.
func TestNilClusterFuturePipesError(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		switch m := ctx.Message().(type) {
		case string:
			cluster.Get(ctx.System()).RequestFuture(cluster.NewIdentity("k", "a"), m, 0).PipeTo(ctx.Self())
		case error:
			ctx.Send(p.PID(), m)
		}
	}))
	sys.Root().Send(pid, "call")
	if err := testkit.ExpectMsg[error](p, 0); !errors.Is(err, cluster.ErrNotInstalled) {
		t.Fatalf("piped %v", err)
	}
}
