package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestTypedCallUntypedNilRequest: Call and CallFuture with a nil request
// that has no type (req == nil, not a nil *DepositRequest) fail at once
// with remote.ErrUnknownType when the grain is on the caller's member, as
// they do when it is on another (the serializers cannot encode it);
// before, the grain on the caller's member got a nil message, its
// ReceiveMessage answered nothing, and the caller waited for its deadline.
func TestTypedCallUntypedNilRequest(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(typedAccountKind(counters("nil"), nil)))
	id := cluster.NewIdentity(shopv1.AccountKindName, "nil")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cluster.Call[*shopv1.Balance](ctx, tc.Node(0), id, nil); !errors.Is(err, remote.ErrUnknownType) {
		t.Fatalf("Call(nil): %v, want remote.ErrUnknownType", err)
	}
	if _, err := cluster.CallFuture(tc.Node(0), id, nil, 10*time.Second).Result(); !errors.Is(err, remote.ErrUnknownType) {
		t.Fatalf("CallFuture(nil): %v, want remote.ErrUnknownType", err)
	}
}

// TestClusterNilRequestFailsAtOnce: Request and RequestFuture with a nil
// message fail at once with remote.ErrUnknownType wherever the grain runs;
// before, a grain on the caller's member got a nil message it answered
// nothing to, and the caller waited for its deadline.
func TestClusterNilRequestFailsAtOnce(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(counterKind()))
	id := cluster.NewIdentity("counter", "nil")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cluster.Request[*Total](ctx, tc.Node(0), id, nil); !errors.Is(err, remote.ErrUnknownType) || ctx.Err() != nil {
		t.Fatalf("Request(nil): %v (ctx %v), want remote.ErrUnknownType at once", err, ctx.Err())
	}
	if _, err := tc.Node(0).RequestFuture(id, nil, 10*time.Second).Result(); !errors.Is(err, remote.ErrUnknownType) {
		t.Fatalf("RequestFuture(nil): %v, want remote.ErrUnknownType", err)
	}
}
