package cluster_test

import (
	"errors"
	"sync/atomic"
	"testing"

	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// tracedContext is a grain's own wrapper of its GrainContext, as a helper
// that adds tracing or logging to it makes one.
type tracedContext struct {
	cluster.GrainContext
	span string
}

// wrappingAccount handles GetBalance through a helper that takes a wrapped
// context: the helper defers the reply, which Deposit sends; IdentityOf of
// the wrapped context is recorded. A *structpb.Value that comes as a
// request (not one of the service's) has its reply deferred by
// ReceiveMessage, and never sent.
type wrappingAccount struct {
	testAccount
	pending *cluster.DeferredReply[*shopv1.Balance]
	idOK    bool
}

func (a *wrappingAccount) GetBalance(ctx cluster.GrainContext, _ *emptypb.Empty) (*shopv1.Balance, error) {
	a.deferBalance(tracedContext{GrainContext: ctx, span: "get-balance"})
	return nil, nil
}

func (a *wrappingAccount) deferBalance(ctx cluster.GrainContext) {
	id, ok := cluster.IdentityOf(ctx)
	a.idOK = ok && id == ctx.Identity()
	a.pending = cluster.DeferReply[*shopv1.Balance](ctx)
}

func (a *wrappingAccount) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	b, err := a.testAccount.Deposit(ctx, req)
	if a.pending != nil {
		a.pending.Reply(b, err)
	}
	return b, err
}

func (a *wrappingAccount) ReceiveMessage(ctx cluster.GrainContext, msg any) {
	if _, ok := msg.(*structpb.Value); ok {
		cluster.DeferReply[*shopv1.Balance](ctx)
	}
}

func newWrappingGrain(t *testing.T) (*testkit.Grain, **wrappingAccount) {
	var last *wrappingAccount
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		last = &wrappingAccount{testAccount: testAccount{id: id, activations: new(atomic.Int32)}}
		return last
	})
	return testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "wrapped")), &last
}

// TestTypedGrainDeferReplyThroughWrappedContext: DeferReply and
// IdentityOf work on a GrainContext the grain wrapped (a struct embedding
// it, as a tracing helper makes); before, DeferReply type-asserted the
// runtime's own context, so through a wrapper its reply went nowhere and
// the runtime answered the caller at once with the method's nil (an empty
// Balance), and IdentityOf reported no grain.
func TestTypedGrainDeferReplyThroughWrappedContext(t *testing.T) {
	g, acct := newWrappingGrain(t)
	g.Send(&emptypb.Empty{})
	if g.Probe.Len() != 0 {
		t.Fatalf("the deferred GetBalance was answered at once: %v", testkit.ExpectMsg[any](g.Probe, 0))
	}
	if !(*acct).idOK {
		t.Fatal("IdentityOf of the wrapped GrainContext: no identity")
	}
	g.Send(&shopv1.DepositRequest{Amount: &commonv1.Money{Units: 7}})
	for _, what := range []string{"the deferred GetBalance", "Deposit"} {
		b, err := cluster.GrainReply[*shopv1.Balance](testkit.ExpectMsg[any](g.Probe, 0))
		if err != nil || b.GetAmount().GetUnits() != 7 {
			t.Fatalf("%s: %v, %v; want a balance of 7", what, b, err)
		}
	}
}

// TestTypedGrainDeferReplyInReceiveMessageAbandoned: a reply deferred by
// ReceiveMessage (a message with a sender that is none of the service's
// requests) and not sent when the activation stops is answered with
// CodeAbandoned, as one deferred by a method is; before, only a method's
// was kept, and the caller waited for its deadline.
func TestTypedGrainDeferReplyInReceiveMessageAbandoned(t *testing.T) {
	g, _ := newWrappingGrain(t)
	g.Send(structpb.NewStringValue("ping"))
	g.Probe.ExpectNoMsg(0)
	g.Reactivate()
	_, err := cluster.GrainReply[*shopv1.Balance](testkit.ExpectMsg[any](g.Probe, 0))
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeAbandoned}) {
		t.Fatalf("the reply ReceiveMessage deferred: %v, want CodeAbandoned", err)
	}
}
