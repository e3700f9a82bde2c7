package testkit_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// unitAccount is a generated grain (shop.v1.Account) for the unit tests:
// it stores its balance in a fenced store, so a reactivation keeps it.
type unitAccount struct {
	store                 *testkit.FencedStore[int64]
	units                 int64
	activated, deactivate *int
}

func (a *unitAccount) Activated(ctx cluster.GrainContext) error {
	*a.activated++
	if err := a.store.Claim(ctx.Identity(), ctx.FencingToken()); err != nil {
		return err
	}
	a.units, _ = a.store.Load(ctx.Identity())
	return nil
}

func (a *unitAccount) Deactivating(cluster.GrainContext) { *a.deactivate++ }

func (a *unitAccount) reply() *shopv1.Balance {
	return &shopv1.Balance{Amount: &commonv1.Money{Units: a.units}, Activations: int32(*a.activated)}
}

func (a *unitAccount) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	n := a.units + req.GetAmount().GetUnits()
	if err := a.store.Write(ctx.Identity(), ctx.FencingToken(), n); err != nil {
		return nil, err
	}
	a.units = n
	return a.reply(), nil
}

func (a *unitAccount) GetBalance(cluster.GrainContext, *emptypb.Empty) (*shopv1.Balance, error) {
	return a.reply(), nil
}

func (a *unitAccount) Withdraw(_ cluster.GrainContext, req *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	return nil, cluster.NewGrainError("insufficient_funds", "asked %d", req.GetAmount().GetUnits())
}

func (a *unitAccount) Crash(cluster.GrainContext, *shopv1.CrashRequest) (*shopv1.Balance, error) {
	panic("unit: simulated bug")
}

func (a *unitAccount) Transfer(cluster.GrainContext, *shopv1.TransferRequest) (*shopv1.Balance, error) {
	return nil, errors.New("not in unit tests")
}

// TestGrainDrivesGeneratedGrain: the grain testkit runs a generated grain
// without a cluster: typed replies, the GrainError of a method, a panic as
// CodeInternal with a restart, and the lifecycle hooks on Reactivate.
func TestGrainDrivesGeneratedGrain(t *testing.T) {
	store := testkit.NewFencedStore[int64](nil)
	var activated, deactivated int
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		return &unitAccount{store: store, activated: &activated, deactivate: &deactivated}
	})
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	if activated != 1 {
		t.Fatalf("Activated ran %d times, want 1", activated)
	}
	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 3}})
	if err != nil || b.GetAmount().GetUnits() != 3 {
		t.Fatalf("Deposit: %v, %v", b, err)
	}
	_, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.WithdrawRequest{Amount: &commonv1.Money{Units: 9}})
	if !errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}) {
		t.Fatalf("Withdraw: %v", err)
	}
	_, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.CrashRequest{})
	var ge *cluster.GrainError
	if !errors.As(err, &ge) || ge.Code != cluster.CodeInternal {
		t.Fatalf("Crash: %v", err)
	}
	// Supervised: the grain restarted (Activated again) and kept serving.
	b, err = testkit.CallGrain[*shopv1.Balance](g, &emptypb.Empty{})
	if err != nil || b.GetActivations() != 2 || b.GetAmount().GetUnits() != 3 {
		t.Fatalf("after the panic: %v, %v", b, err)
	}
	g.Reactivate()
	if deactivated < 1 || activated != 3 {
		t.Fatalf("Reactivate: deactivated %d, activated %d", deactivated, activated)
	}
	b, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 1}})
	if err != nil || b.GetAmount().GetUnits() != 4 {
		t.Fatalf("after Reactivate: %v, %v", b, err)
	}
	// A message that is no request of the service, sent as a request.
	_, err = testkit.CallGrain[*shopv1.Balance](g, &commonv1.Money{})
	if !errors.As(err, &ge) || ge.Code != cluster.CodeUnimplemented {
		t.Fatalf("unknown request: %v", err)
	}
}

// refusingAccount is a generated grain whose Activated fails.
type refusingAccount struct{ unitAccount }

func (a *refusingAccount) Activated(cluster.GrainContext) error { return errors.New("no state") }

// TestGrainActivatedErrorReported: in the cluster a typed grain whose
// Activated returns an error fails the activation and the caller gets
// *cluster.ActivationFailedError (docs/typed-grains.md); the grain testkit
// promises the same (Grain.ActivationError, CallGrain's error).
func TestGrainActivatedErrorReported(t *testing.T) {
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		var n int
		return &refusingAccount{unitAccount{activated: &n, deactivate: &n}}
	})
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	if err := g.ActivationError(); !errors.Is(err, cluster.ErrActivationFailed) {
		t.Fatalf("ActivationError: %v", err)
	}
	_, err := testkit.CallGrain[*shopv1.Balance](g, &emptypb.Empty{})
	if !errors.Is(err, cluster.ErrActivationFailed) || !strings.Contains(err.Error(), "activated: no state") {
		t.Fatalf("CallGrain: %v", err)
	}
	if g.Token.Seq != 2 {
		t.Fatalf("CallGrain did not try a second activation: token %v", g.Token)
	}
}

// Kind.StandaloneProps with a nil onFailed logs the failed activation and
// stops the grain, as with none; before, the grain's turn called the nil
// function and panicked.
func TestStandalonePropsNilOnFailed(t *testing.T) {
	tries := 0
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		var n int
		return &countingRefusal{refusingAccount{unitAccount{activated: &n, deactivate: &n}}, &tries}
	})
	sys := testkit.NewManualSystem(t)
	id := cluster.NewIdentity(shopv1.AccountKindName, "alice")
	sys.Root().Spawn(kind.StandaloneProps(id, cluster.FencingToken{Epoch: 1, Seq: 1}, nil))
	sys.RunUntilIdle()
	if tries != 1 {
		t.Fatalf("Activated ran %d times: the failure was a panic, and the grain restarted", tries)
	}
}

// countingRefusal is a refusingAccount that counts its Activated calls.
type countingRefusal struct {
	refusingAccount
	tries *int
}

func (a *countingRefusal) Activated(ctx cluster.GrainContext) error {
	*a.tries++
	return a.refusingAccount.Activated(ctx)
}
