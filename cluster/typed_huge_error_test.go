package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// hugeErrorAccount's Withdraw fails with an error whose text is larger
// than a remote frame (4 MiB by default), its Deposit with one whose text
// is not UTF-8 (which a protobuf string cannot carry).
type hugeErrorAccount struct{ testAccount }

func (a *hugeErrorAccount) Deposit(cluster.GrainContext, *shopv1.DepositRequest) (*shopv1.Balance, error) {
	return nil, errors.New("bad bytes: \xff\xfe")
}

func (a *hugeErrorAccount) Withdraw(cluster.GrainContext, *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	return nil, cluster.NewGrainError("too_big", "%s", strings.Repeat("x", 5<<20))
}

// TestTypedGrainHugeErrorReachesRemoteCaller: a grain error whose message
// does not fit in a frame, or is not UTF-8, still reaches a caller on
// another member, as a *GrainError of its code with the message cut or
// repaired; before, the reply could not be sent and the caller waited for
// its deadline (ErrTimeout).
func TestTypedGrainHugeErrorReachesRemoteCaller(t *testing.T) {
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &hugeErrorAccount{testAccount{id: id, activations: new(atomic.Int32)}}
	})
	tc := testkit.NewCluster(t, testkit.Nodes(2), testkit.TCP(), testkit.Kinds(kind),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			c.RequestTimeout, c.AttemptTimeout = 20*time.Second, 20*time.Second
		}))
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, err := shopv1.NewAccountClient(tc.Node(i), "big").Withdraw(ctx, &shopv1.WithdrawRequest{})
		cancel()
		var ge *cluster.GrainError
		if !errors.As(err, &ge) || ge.Code != "too_big" || !strings.HasPrefix(ge.Message, "xxxx") {
			t.Fatalf("member %d: %.200v, want GrainError too_big", i, err)
		}
		ctx, cancel = context.WithTimeout(context.Background(), 20*time.Second)
		_, err = shopv1.NewAccountClient(tc.Node(i), "big").Deposit(ctx, &shopv1.DepositRequest{})
		cancel()
		if !errors.As(err, &ge) || ge.Code != cluster.CodeUnknown || !strings.HasPrefix(ge.Message, "bad bytes: ") {
			t.Fatalf("member %d: %v, want GrainError %s", i, err, cluster.CodeUnknown)
		}
	}
}
