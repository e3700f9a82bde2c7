package cluster_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// lockingAccount stashes deposits while it is locked (a Withdraw locks it,
// a GetBalance unlocks it and unstashes): a typed grain that takes one kind
// of request later, as a non-reentrant grain would. With deferFirst, the
// stashed turn also defers its reply first.
type lockingAccount struct {
	testAccount
	locked     bool
	deferFirst bool
}

func (a *lockingAccount) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	if a.locked {
		if a.deferFirst {
			cluster.DeferReply[*shopv1.Balance](ctx)
		}
		ctx.Stash()
		return nil, nil
	}
	return a.testAccount.Deposit(ctx, req)
}

func (a *lockingAccount) Withdraw(ctx cluster.GrainContext, _ *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	a.locked = true
	return a.balance(), nil
}

func (a *lockingAccount) GetBalance(ctx cluster.GrainContext, _ *emptypb.Empty) (*shopv1.Balance, error) {
	a.locked = false
	ctx.UnstashAll()
	return a.balance(), nil
}

// A typed grain's method that stashes its request sends nothing on that
// turn; the request is answered once, when UnstashAll gives it to the
// method again. Before, the runtime answered the stashed request at once
// with the method's return values (an empty reply) and again after the
// unstash, and a reply deferred before Stash was never sent nor abandoned:
// the activation held it as pending work and was never passivated
// (newuser6's report).
func TestTypedGrainStashedRequestAnsweredOnce(t *testing.T) {
	for _, deferFirst := range []bool{false, true} {
		name := "plain"
		if deferFirst {
			name = "deferred-first"
		}
		t.Run(name, func(t *testing.T) {
			var activations atomic.Int32
			kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
				return &lockingAccount{testAccount: testAccount{id: id, activations: &activations}, deferFirst: deferFirst}
			}, cluster.WithIdleTimeout(time.Minute))
			g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "lock"))

			g.Send(&shopv1.WithdrawRequest{})
			_, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
			require.NoError(t, err)
			g.Send(&shopv1.DepositRequest{Amount: &commonv1.Money{Units: 5}})
			g.Probe.ExpectNoMsg(0) // stashed: no answer yet

			g.Send(&emptypb.Empty{})
			b, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
			require.NoError(t, err)
			require.Zero(t, b.GetAmount().GetUnits(), "GetBalance ran before the unstashed deposit")
			b, err = testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
			require.NoError(t, err)
			require.EqualValues(t, 5, b.GetAmount().GetUnits(), "the deposit's one answer, after the unstash")
			g.Probe.ExpectNoMsg(0)

			// Nothing is pending: the idle timeout passivates the grain.
			tok := g.Token
			g.Sys.Advance(2 * time.Minute)
			g.Send(&emptypb.Empty{})
			_, err = testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
			require.NoError(t, err)
			require.NotEqual(t, tok, g.Token, "the idle grain was passivated and activated again")
			require.EqualValues(t, 2, activations.Load())
		})
	}
}
