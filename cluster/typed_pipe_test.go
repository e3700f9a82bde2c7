package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// pipingAuditor (service Auditor: Record(Balance)) pipes an account's
// *Balance to itself; it counts what reaches Record and ReceiveMessage.
type pipingAuditor struct {
	records, received *atomic.Int32
}

func (a *pipingAuditor) Record(ctx cluster.GrainContext, b *shopv1.Balance) (*wrapperspb.Int64Value, error) {
	if b.GetActivations() == 0 { // the caller's request, not the piped balance
		shopv1.NewAccountClient(cluster.Get(ctx.System()), "piped").GetBalanceFuture(&emptypb.Empty{}, 0).PipeTo(ctx.Self())
		return &wrapperspb.Int64Value{}, nil
	}
	a.records.Add(1)
	return &wrapperspb.Int64Value{}, nil
}

func (a *pipingAuditor) ReceiveMessage(cluster.GrainContext, any) { a.received.Add(1) }

// TestTypedGrainPipedRequestType pins what docs/typed-grains.md says of
// PipeTo: a piped result whose type is a request of the grain's own
// service is dispatched to that method (dispatch goes by type), not to
// ReceiveMessage; ReenterAfter avoids it.
func TestTypedGrainPipedRequestType(t *testing.T) {
	var records, received atomic.Int32
	auditor := shopv1.AuditorKind(func(cluster.Identity) shopv1.AuditorGrain { return &pipingAuditor{&records, &received} })
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(auditor, typedAccountKind(counters("piped"), nil)))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := shopv1.NewAuditorClient(tc.Node(0), "a").Record(ctx, &shopv1.Balance{}); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, func() bool { return records.Load()+received.Load() > 0 }, 20*time.Second, "the piped balance arrived nowhere")
	if records.Load() != 1 || received.Load() != 0 {
		t.Fatalf("Record got %d piped balances, ReceiveMessage %d; want 1 and 0", records.Load(), received.Load())
	}
}
