package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

const (
	pendingIdle = 100 * time.Millisecond
	pendingTick = 10 * time.Millisecond
)

// waitingAccount: Transfer defers its reply until the deposit to req.To
// answered (DeferReply + ReenterAfter over the client's future); Deposit
// on "slow" defers its reply and hands it to the test, which sends it when
// it likes, as a grain that answers late.
type waitingAccount struct {
	testAccount
	held chan<- *cluster.DeferredReply[*shopv1.Balance]
}

func (a *waitingAccount) Transfer(ctx cluster.GrainContext, req *shopv1.TransferRequest) (*shopv1.Balance, error) {
	reply := cluster.DeferReply[*shopv1.Balance](ctx)
	to := shopv1.NewAccountClient(cluster.Get(ctx.System()), req.GetTo())
	ctx.ReenterAfter(to.DepositFuture(&shopv1.DepositRequest{Amount: req.GetAmount()}, 0), func(res any, err error) {
		if err != nil {
			reply.Reply(nil, err)
			return
		}
		reply.Reply(res.(*shopv1.Balance), nil)
	})
	return nil, nil
}

func (a *waitingAccount) Deposit(ctx cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	if ctx.Identity().ID == "slow" {
		a.held <- cluster.DeferReply[*shopv1.Balance](ctx)
		return nil, nil
	}
	return a.testAccount.Deposit(ctx, req)
}

// A typed grain whose method deferred its reply behind a call to another
// grain is not idle while it waits, nor is the grain that has not answered
// it yet: both outlive a grain activated after them that passivates for
// idleness, the caller gets the reply (not CodeAbandoned), and both
// passivate once their work has ended (the count of pending work returns
// to zero). Before, the idle timeout passivated the waiting grain (and
// the slow one) and the caller got CodeAbandoned although the deposit may
// have taken effect.
func TestIdleTimeoutSparesGrainWithDeferredReply(t *testing.T) {
	acts := counters("waiter", "slow", "control")
	held := make(chan *cluster.DeferredReply[*shopv1.Balance], 1)
	deactivated := make(chan cluster.Identity, 8)
	kind := shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &waitingAccount{testAccount: testAccount{id: id, activations: acts[id.ID], deactivated: deactivated}, held: held}
	}, cluster.WithIdleTimeout(pendingIdle))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind), testkit.ConfigureCluster(func(c *cluster.Config) {
		c.TickInterval = pendingTick
		c.RequestTimeout, c.AttemptTimeout = 30*time.Second, 30*time.Second
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n := tc.Node(0)

	type result struct {
		b   *shopv1.Balance
		err error
	}
	done := make(chan result, 1)
	go func() {
		b, err := shopv1.NewAccountClient(n, "waiter").Transfer(ctx, &shopv1.TransferRequest{To: "slow", Amount: &commonv1.Money{Units: 3}})
		done <- result{b, err}
	}()
	var reply *cluster.DeferredReply[*shopv1.Balance]
	select {
	case reply = <-held: // waiter waits for slow, slow for the test
	case <-ctx.Done():
		t.Fatal("the deposit never reached slow")
	}
	// control's last message comes after waiter's and slow's: once it is
	// passivated for idleness, they would have been too.
	_, err := shopv1.NewAccountClient(n, "control").GetBalance(ctx, &emptypb.Empty{})
	require.NoError(t, err)
	awaitDeactivated(ctx, t, deactivated, "control", "waiter", "slow")

	reply.Reply(&shopv1.Balance{Amount: &commonv1.Money{Units: 3}}, nil)
	select {
	case r := <-done:
		require.NoError(t, r.err, "the caller of the waiting grain")
		require.EqualValues(t, 3, r.b.GetAmount().GetUnits())
	case <-ctx.Done():
		t.Fatal("no reply")
	}
	// Their work ended: both are idle now, and passivate (in either order).
	left := map[string]bool{"waiter": true, "slow": true}
	for len(left) > 0 {
		select {
		case id := <-deactivated:
			require.True(t, left[id.ID], "%s deactivated again", id.ID)
			delete(left, id.ID)
		case <-ctx.Done():
			t.Fatalf("%v never deactivated", left)
		}
	}
	require.EqualValues(t, 1, acts["waiter"].Load())
	require.EqualValues(t, 1, acts["slow"].Load())
}

// awaitDeactivated waits until the grain want deactivates, failing if one
// of notYet does first.
func awaitDeactivated(ctx context.Context, t *testing.T, ch <-chan cluster.Identity, want string, notYet ...string) {
	t.Helper()
	for {
		select {
		case id := <-ch:
			if id.ID == want {
				return
			}
			for _, n := range notYet {
				if id.ID == n {
					t.Fatalf("%s deactivated before %s", n, want)
				}
			}
		case <-ctx.Done():
			t.Fatalf("%s never deactivated", want)
		}
	}
}

type (
	pendingWait  struct{ Target *actor.PID }
	pendingCrash struct{}
	pendingPing  struct{}
)

// An untyped grain waiting for a ReenterAfter continuation is not idle
// until it has run; a restart drops the continuations that have not run,
// and their count: the grain is idle again afterwards and passivates.
func TestIdleTimeoutSparesGrainWithContinuation(t *testing.T) {
	ran := make(chan string, 4)
	stopping := make(chan string, 8)
	started := make(chan string, 4) // restarts
	kind := cluster.NewKind("waiter", actor.PropsFromFunc(func(c actor.Context) {
		id, _ := cluster.IdentityOf(c)
		switch m := c.Message().(type) {
		case *pendingWait:
			c.ReenterAfter(c.RequestFuture(m.Target, &pendingPing{}, time.Minute), func(any, error) { ran <- id.ID })
			c.Respond(&pendingPing{})
		case *pendingCrash:
			panic("waiter: simulated bug")
		case *actor.Restarting:
			started <- id.ID
		case *pendingPing:
			c.Respond(&pendingPing{})
		case *actor.Stopping:
			stopping <- id.ID
		}
	}), cluster.WithIdleTimeout(pendingIdle))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind), testkit.ConfigureCluster(func(c *cluster.Config) {
		c.TickInterval = pendingTick
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, sys := tc.Node(0), tc.System(0)
	// target takes the grains' requests; the test answers them.
	asked := make(chan *actor.PID, 4)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*pendingPing); ok {
			asked <- c.Sender()
		}
	}))
	var answered atomic.Int32
	answer := func(to *actor.PID) {
		answered.Add(1)
		sys.Root().Send(to, &pendingPing{})
	}
	ask := func(id string, msg any) {
		t.Helper()
		_, err := cluster.Request[*pendingPing](ctx, n, cluster.NewIdentity("waiter", id), msg)
		require.NoError(t, err)
	}
	next := func(ch <-chan string) string {
		t.Helper()
		select {
		case s := <-ch:
			return s
		case <-ctx.Done():
			t.Fatal("timed out waiting for a grain's restart or stop")
			return ""
		}
	}

	ask("w", &pendingWait{Target: target})
	var futurePID *actor.PID
	select {
	case futurePID = <-asked:
	case <-ctx.Done():
		t.Fatal("never asked")
	}
	ask("control", &pendingPing{})
	require.Equal(t, "control", next(stopping), "the grain waiting for its continuation passivated first")
	answer(futurePID)
	select { // one passivated in the same tick as control stops after it
	case <-ran:
	case id := <-stopping:
		t.Fatalf("%s passivated while it waited for its continuation", id)
	case <-ctx.Done():
		t.Fatal("the continuation never ran")
	}
	require.Equal(t, "w", next(stopping), "idle once its continuation ran")

	// A restart drops the pending continuation: the grain is idle after it.
	ask("r", &pendingWait{Target: target})
	select {
	case <-asked: // never answered: the future would complete at its minute's timeout
	case <-ctx.Done():
		t.Fatal("never asked")
	}
	n.Send(cluster.NewIdentity("waiter", "r"), &pendingCrash{})
	require.Equal(t, "r", next(started), "not restarted")
	require.Equal(t, "r", next(stopping), "the restarted grain never passivated (its dropped continuation still counted)")
	require.Empty(t, ran)
	require.EqualValues(t, 1, answered.Load())
}
