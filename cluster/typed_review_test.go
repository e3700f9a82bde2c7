package cluster_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// edgeAccount is a generated grain whose methods do what a careless grain
// does: GetBalance defers its reply and never sends it, Withdraw returns a
// typed nil *GrainError, Transfer sends a nil deferred reply; its
// Deactivating panics when panicOnStop is set.
type edgeAccount struct {
	testAccount
	panicOnStop bool
}

func (a *edgeAccount) GetBalance(ctx cluster.GrainContext, _ *emptypb.Empty) (*shopv1.Balance, error) {
	cluster.DeferReply[*shopv1.Balance](ctx)
	return nil, nil
}

func (a *edgeAccount) Withdraw(cluster.GrainContext, *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	var ge *cluster.GrainError // a typed nil: a non-nil error
	return nil, ge
}

func (a *edgeAccount) Transfer(ctx cluster.GrainContext, _ *shopv1.TransferRequest) (*shopv1.Balance, error) {
	cluster.DeferReply[*shopv1.Balance](ctx).Reply(nil, nil)
	return nil, nil
}

func (a *edgeAccount) Deactivating(cluster.GrainContext) {
	if a.panicOnStop {
		panic("edge: deactivating bug")
	}
}

func newEdgeGrain(t *testing.T, panicOnStop bool) (*testkit.Grain, *atomic.Int32) {
	acts := new(atomic.Int32)
	id := cluster.NewIdentity(shopv1.AccountKindName, "edge")
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &edgeAccount{testAccount: testAccount{id: id, activations: acts}, panicOnStop: panicOnStop}
	})
	return testkit.NewGrain(t, kind, id), acts
}

// TestTypedGrainDeferredReplyAbandonedWhenDeactivatingPanics: a deferred
// reply still pending when the activation stops is answered with
// CodeAbandoned even when the grain's Deactivating panics; before, the
// panic skipped the answer and the caller waited for its deadline.
func TestTypedGrainDeferredReplyAbandonedWhenDeactivatingPanics(t *testing.T) {
	g, _ := newEdgeGrain(t, true)
	g.Send(&emptypb.Empty{})
	g.Probe.ExpectNoMsg(0)
	g.Reactivate()
	_, err := cluster.GrainReply[*shopv1.Balance](testkit.ExpectMsg[any](g.Probe, 0))
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeAbandoned}) {
		t.Fatalf("the pending deferred reply: %v, want CodeAbandoned", err)
	}
}

// TestTypedGrainDeferredNilReplyIsEmpty: a deferred reply sent as nil
// reaches the caller as an empty message, as a nil returned by a method
// does (and as it would after crossing the wire); before, a local caller
// got a nil *Balance with a nil error.
func TestTypedGrainDeferredNilReplyIsEmpty(t *testing.T) {
	g, _ := newEdgeGrain(t, false)
	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "x", Amount: &commonv1.Money{Units: 1}})
	if err != nil || b == nil {
		t.Fatalf("Transfer: %v, %v; want an empty *Balance", b, err)
	}
}

// TestTypedGrainTypedNilError: a method that returns a typed nil
// *GrainError (a non-nil error) answers CodeUnknown and the grain keeps
// its activation; before, turning it into the wire message dereferenced
// the nil pointer: the caller got CodeInternal and the grain restarted,
// losing its state.
func TestTypedGrainTypedNilError(t *testing.T) {
	g, acts := newEdgeGrain(t, false)
	_, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.WithdrawRequest{})
	var ge *cluster.GrainError
	if !errors.As(err, &ge) || ge.Code != cluster.CodeUnknown {
		t.Fatalf("Withdraw: %v, want CodeUnknown", err)
	}
	if n := acts.Load(); n != 1 {
		t.Fatalf("%d activations, want 1: the grain restarted", n)
	}
}

// TestTypedGrainReplyAsInterface: a grain's error is an error for a caller
// that takes the reply as an interface type (proto.Message, any), as for
// one that names the reply's type; before, the reply T matched first and
// the caller got the runtime's internal wire message as a reply with a nil
// error.
func TestTypedGrainReplyAsInterface(t *testing.T) {
	g, _ := newEdgeGrain(t, false)
	r, err := testkit.CallGrain[proto.Message](g, &shopv1.WithdrawRequest{})
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeUnknown}) {
		t.Fatalf("CallGrain[proto.Message]: %v, %v; want a GrainError", r, err)
	}
	a, err := testkit.CallGrain[any](g, &shopv1.WithdrawRequest{})
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeUnknown}) {
		t.Fatalf("CallGrain[any]: %v, %v; want a GrainError", a, err)
	}
	if _, err := cluster.GrainReply[error](cluster.NewGrainError("c", "m")); !errors.Is(err, &cluster.GrainError{Code: "c"}) {
		t.Fatalf("GrainReply[error] of a *GrainError: %v", err)
	}
	b, err := testkit.CallGrain[proto.Message](g, &shopv1.DepositRequest{})
	if _, ok := b.(*shopv1.Balance); err != nil || !ok {
		t.Fatalf("CallGrain[proto.Message] of Deposit: %v, %v", b, err)
	}
}

// panickyActivation's Activated panics; Deactivating records that it ran.
type panickyActivation struct {
	testAccount
	deactivated *atomic.Bool
}

func (a *panickyActivation) Activated(cluster.GrainContext) error { panic("edge: cannot load") }

func (a *panickyActivation) Deactivating(cluster.GrainContext) { a.deactivated.Store(true) }

// TestTypedGrainActivatedPanicSkipsDeactivating: an activation whose
// Activated panicked is stopped without Deactivating, as one whose
// Activated returned an error is: it never loaded its state, and a
// Deactivating that stores the state would overwrite the stored state with
// an empty one. Before, Deactivating ran.
func TestTypedGrainActivatedPanicSkipsDeactivating(t *testing.T) {
	var deactivated atomic.Bool
	id := cluster.NewIdentity(shopv1.AccountKindName, "panicky")
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &panickyActivation{testAccount: testAccount{id: id, activations: new(atomic.Int32)}, deactivated: &deactivated}
	})
	g := testkit.NewGrain(t, kind, id)
	g.Probe.Watch(g.PID)
	g.Sys.RunUntilIdle()
	testkit.ExpectMsg[*actor.Terminated](g.Probe, 0)
	if deactivated.Load() {
		t.Fatal("Deactivating ran on an activation whose Activated panicked")
	}
}
