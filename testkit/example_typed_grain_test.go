package testkit_test

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// A typed grain (generated from internal/testpb/shop/v1) in a unit test:
// CallGrain returns the method's reply or its *cluster.GrainError; the
// kind's idle timeout passivates the grain when the virtual clock gets
// there, and the next call activates it again with the next token.
func ExampleCallGrain() {
	t := exampleT()
	defer t.finish()

	store := testkit.NewFencedStore[int64](nil)
	var activated, deactivated int
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		return &unitAccount{store: store, activated: &activated, deactivate: &deactivated}
	}, cluster.WithIdleTimeout(time.Minute))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))

	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 3}})
	fmt.Println(b.GetAmount().GetUnits(), err)
	_, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.WithdrawRequest{Amount: &commonv1.Money{Units: 9}})
	fmt.Println(errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}), err)

	g.Sys.Advance(time.Minute) // a minute without a message: passivated
	fmt.Println("deactivated:", deactivated)
	b, err = testkit.CallGrain[*shopv1.Balance](g, &emptypb.Empty{}) // activated again; the state comes from the store
	fmt.Println(b.GetAmount().GetUnits(), "activations:", activated, "token:", g.Token, err)
	// Output:
	// 3 <nil>
	// true cluster: grain error insufficient_funds: asked 9
	// deactivated: 1
	// 3 activations: 2 token: 1.2 <nil>
}
