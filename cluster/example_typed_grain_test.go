package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
)

// A typed grain generated from a .proto service (internal/testpb/shop/v1):
// the kind from AccountKind, calls through the generated client, a method's
// error as a *cluster.GrainError. No message is registered by hand.
func ExampleNewGrainKind() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &testAccount{id: id, activations: counters(id.ID)[id.ID]}
	})
	sys, c, err := startBankMember(ctx, reg, kind)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()

	alice := shopv1.NewAccountClient(c, "alice")
	b, err := alice.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Currency: "EUR", Units: 5}})
	fmt.Println(b.GetAmount().GetUnits(), err)
	_, err = alice.Withdraw(ctx, &shopv1.WithdrawRequest{Amount: &commonv1.Money{Units: 9}})
	var ge *cluster.GrainError
	fmt.Println(errors.As(err, &ge), ge.Code, ge.Message)
	b, err = alice.GetBalance(ctx, &emptypb.Empty{})
	fmt.Println(b.GetAmount().GetUnits(), b.GetActivations(), err)
	// Output:
	// 5 <nil>
	// true insufficient_funds balance 5, asked 9
	// 5 1 <nil>
}
