package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// deferringAccount answers Transfer only once the other account confirmed
// the deposit (DeferReply + ReenterAfter: no worker waits), with the other
// account's balance; GetBalance on "forgetful" defers its reply and
// passivates without ever sending it.
type deferringAccount struct {
	testAccount
	confirmed int
}

func (a *deferringAccount) Transfer(ctx cluster.GrainContext, req *shopv1.TransferRequest) (*shopv1.Balance, error) {
	n := req.GetAmount().GetUnits()
	if n > a.units {
		return nil, cluster.NewGrainError("insufficient_funds", "balance %d, asked %d", a.units, n)
	}
	reply := cluster.DeferReply[*shopv1.Balance](ctx)
	a.units -= n
	to := shopv1.NewAccountClient(cluster.Get(ctx.System()), req.GetTo())
	ctx.ReenterAfter(to.DepositFuture(&shopv1.DepositRequest{Amount: req.GetAmount()}, 0), func(res any, err error) {
		if err != nil {
			a.units += n // the deposit failed: undo the withdrawal
			reply.Reply(nil, err)
			return
		}
		a.confirmed++
		reply.Reply(res.(*shopv1.Balance), nil)
	})
	return nil, nil
}

func (a *deferringAccount) GetBalance(ctx cluster.GrainContext, e *emptypb.Empty) (*shopv1.Balance, error) {
	if ctx.Identity().ID == "forgetful" {
		cluster.DeferReply[*shopv1.Balance](ctx)
		ctx.Passivate()
		return nil, nil
	}
	return a.testAccount.GetBalance(ctx, e)
}

func deferringKind(activations map[string]*atomic.Int32) cluster.Kind {
	return shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &deferringAccount{testAccount: testAccount{id: id, activations: activations[id.ID]}}
	})
}

// TestTypedGrainDeferredReply: a method defers its reply until another
// grain answered (on another member): the caller gets the later reply, and
// the grain handled other requests meanwhile (its worker was not held).
func TestTypedGrainDeferredReply(t *testing.T) {
	tc := newTypedCluster(t, deferringKind(counters("gina", "hank")))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	gina := shopv1.NewAccountClient(tc.Node(0), "gina")
	if _, err := gina.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 10}}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		b, err := gina.Transfer(ctx, &shopv1.TransferRequest{To: "hank", Amount: &commonv1.Money{Units: 2}})
		if err != nil {
			t.Fatalf("Transfer %d: %v", i, err)
		}
		if got := b.GetAmount().GetUnits(); got != int64(2*i) {
			t.Fatalf("Transfer %d answered with hank's balance %d, want %d (the deferred reply is the deposit's answer)", i, got, 2*i)
		}
	}
	b, err := gina.GetBalance(ctx, &emptypb.Empty{})
	if err != nil || b.GetAmount().GetUnits() != 4 {
		t.Fatalf("gina: %v, %v", b, err)
	}
	_, err = gina.Transfer(ctx, &shopv1.TransferRequest{To: "hank", Amount: &commonv1.Money{Units: 100}})
	if !errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}) {
		t.Fatalf("an error returned with a deferred reply is sent at once: %v", err)
	}
}

// TestTypedGrainDeferredReplyAbandoned: a deferred reply the grain never
// sent is answered with CodeAbandoned when the activation stops; the caller
// does not wait for its deadline.
func TestTypedGrainDeferredReplyAbandoned(t *testing.T) {
	tc := newTypedCluster(t, deferringKind(counters("forgetful")))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	_, err := shopv1.NewAccountClient(tc.Node(1), "forgetful").GetBalance(ctx, &emptypb.Empty{})
	if !errors.Is(err, &cluster.GrainError{Code: cluster.CodeAbandoned}) {
		t.Fatalf("GetBalance: %v, want CodeAbandoned", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("answered only at the deadline (%v)", time.Since(start))
	}
}
