package testkit_test

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// teller is a generated Account grain that calls another account: Transfer
// through the client's future (ReenterAfter, the deferred reply), Deposit
// through the client's blocking method. It answers with the other
// account's reply or error.
type teller struct{ timeout time.Duration }

func (a *teller) Transfer(ctx cluster.GrainContext, req *shopv1.TransferRequest) (*shopv1.Balance, error) {
	reply := cluster.DeferReply[*shopv1.Balance](ctx)
	to := shopv1.NewAccountClient(cluster.Get(ctx.System()), req.GetTo())
	ctx.ReenterAfter(to.DepositFuture(&shopv1.DepositRequest{Amount: req.GetAmount()}, a.timeout), func(res any, err error) {
		b, _ := res.(*shopv1.Balance)
		reply.Reply(b, err)
	})
	return nil, nil
}

func (a *teller) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	to := shopv1.NewAccountClient(cluster.Get(ctx.System()), "bob")
	return to.Deposit(context.Background(), req)
}

func (a *teller) GetBalance(cluster.GrainContext, *emptypb.Empty) (*shopv1.Balance, error) {
	return nil, nil
}

func (a *teller) Withdraw(cluster.GrainContext, *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	return nil, nil
}

func (a *teller) Crash(cluster.GrainContext, *shopv1.CrashRequest) (*shopv1.Balance, error) {
	return nil, nil
}

// A grain that calls another grain, unit-tested with a stub in place of
// the other grain: the stub gets the calls the generated client makes
// (its future here) and answers them.
func ExampleGrain_Stub() {
	t := exampleT()
	defer t.finish()

	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain { return &teller{} })
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	g.Stub(shopv1.AccountKindName, func(id cluster.Identity, msg any) (any, error) {
		req := msg.(*shopv1.DepositRequest)
		fmt.Println("deposit to", id.ID, req.GetAmount().GetUnits())
		if id.ID == "mallory" {
			return nil, cluster.NewGrainError("frozen", "account %s is frozen", id.ID)
		}
		return &shopv1.Balance{Amount: units(100 + req.GetAmount().GetUnits())}, nil
	})
	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "bob", Amount: units(5)})
	fmt.Println(b.GetAmount().GetUnits(), err)
	_, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "mallory", Amount: units(5)})
	fmt.Println(err)
	// Output:
	// deposit to bob 5
	// 105 <nil>
	// deposit to mallory 5
	// cluster: grain error frozen: account mallory is frozen
}

// A probe stands in for the other grain: the test takes the grain's call,
// checks it and answers when it chooses; until then the grain waits. A
// call nobody answers times out in virtual time.
func ExampleGrain_StubProbe() {
	t := exampleT()
	defer t.finish()

	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain { return &teller{timeout: time.Second} })
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	bob := g.StubProbe(shopv1.AccountKindName)

	g.Send(&shopv1.TransferRequest{To: "bob", Amount: units(5)})
	call, req := testkit.ExpectGrainCall[*shopv1.DepositRequest](bob, 0)
	fmt.Println(call.Identity, req.GetAmount().GetUnits(), g.Probe.Len())
	call.Reply(&shopv1.Balance{Amount: units(105)})
	b, err := cluster.GrainReply[*shopv1.Balance](testkit.ExpectMsg[any](g.Probe, 0))
	fmt.Println(b.GetAmount().GetUnits(), err)

	g.Send(&shopv1.TransferRequest{To: "bob", Amount: units(5)})
	testkit.ExpectGrainCall[*shopv1.DepositRequest](bob, 0) // not answered
	g.Sys.Advance(time.Second)
	_, err = cluster.GrainReply[*shopv1.Balance](testkit.ExpectMsg[any](g.Probe, 0))
	fmt.Println(err)
	// Output:
	// fraktor.test.shop.v1.Account/bob 5 0
	// 105 <nil>
	// cluster: grain error unknown: cluster: timeout: fraktor.test.shop.v1.Account/bob: context deadline exceeded
}
