package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// nilCheckingAccount's Deposit fails when its request is a nil pointer.
type nilCheckingAccount struct{ testAccount }

func (a *nilCheckingAccount) Deposit(_ cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	if req == nil {
		return nil, cluster.NewGrainError("nil_request", "got a nil request")
	}
	return a.balance(), nil
}

// TestTypedGrainNilRequest: a nil request reaches the grain as an empty
// message on every member, as protobuf carries it across the wire, for
// the blocking call and the future alike; before, the grain's own member
// handed it the nil pointer (a method reading a field panicked there
// only).
func TestTypedGrainNilRequest(t *testing.T) {
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &nilCheckingAccount{testAccount{id: id, activations: new(atomic.Int32)}}
	})
	tc := newTypedCluster(t, kind)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 3 {
		c := shopv1.NewAccountClient(tc.Node(i), "nil")
		if _, err := c.Deposit(ctx, nil); err != nil {
			t.Fatalf("member %d: Deposit(nil): %v", i, err)
		}
		if _, err := c.DepositFuture(nil, 20*time.Second).Result(); err != nil {
			t.Fatalf("member %d: DepositFuture(nil): %v", i, err)
		}
	}
}
