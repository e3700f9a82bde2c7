package cluster_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// stashPanicAccount's first Deposit stashes its request and then panics.
type stashPanicAccount struct {
	testAccount
	panics *atomic.Int32
}

func (a *stashPanicAccount) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	if a.panics.Add(1) == 1 {
		ctx.Stash()
		panic("review8: after Stash")
	}
	return a.testAccount.Deposit(ctx, req)
}

// A typed method that stashes its request and then panics: the request is
// answered once. On the reviewed code the panic's recover answers
// CodeInternal at once although the request was stashed, and the restart
// puts the stash back ahead of the mailbox (invoker: x.pending =
// append(x.stash, ...)), so the method runs again and answers a second
// time: the caller was told the call failed (CodeInternal) while the
// deposit was then made.
func TestTypedGrainStashThenPanicAnsweredOnce(t *testing.T) {
	var activations, panics atomic.Int32
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &stashPanicAccount{testAccount: testAccount{id: id, activations: &activations}, panics: &panics}
	}, cluster.WithIdleTimeout(time.Minute))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "stash-panic"))

	g.Send(&shopv1.DepositRequest{Amount: &commonv1.Money{Units: 5}})
	first, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
	if err == nil {
		require.EqualValues(t, 5, first.GetAmount().GetUnits())
	}
	// Whatever the first answer was, it is the only one.
	g.Probe.ExpectNoMsg(200 * time.Millisecond)
	if err != nil && panics.Load() > 1 {
		t.Fatalf("the caller got %v, and the stashed deposit then ran again (%d runs)", err, panics.Load())
	}
}
