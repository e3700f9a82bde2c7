package cluster_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"
	tspb "google.golang.org/protobuf/types/known/timestamppb"

	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// testAccount is a generated grain (shop.v1.Account) with its state in
// memory: a restart (after a panic) starts again from zero.
type testAccount struct {
	id          cluster.Identity
	units       int64
	entries     []*shopv1.Balance_Entry
	activations *atomic.Int32 // per identity, across activations
	deactivated chan<- cluster.Identity
}

func (a *testAccount) balance() *shopv1.Balance {
	return &shopv1.Balance{Amount: &commonv1.Money{Currency: "EUR", Units: a.units}, Entries: a.entries,
		Activations: a.activations.Load()}
}

func (a *testAccount) Activated(ctx cluster.GrainContext) error {
	if ctx.Identity() != a.id {
		return errors.New("activated with another identity")
	}
	if a.id.ID == "broken" {
		return errors.New("account: cannot load")
	}
	a.activations.Add(1)
	return nil
}

func (a *testAccount) Deactivating(ctx cluster.GrainContext) {
	if a.deactivated != nil {
		a.deactivated <- ctx.Identity()
	}
}

func (a *testAccount) Deposit(_ cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	a.units += req.GetAmount().GetUnits()
	a.entries = append(a.entries, &shopv1.Balance_Entry{Delta: req.GetAmount().GetUnits(), At: req.GetAt()})
	return a.balance(), nil
}

func (a *testAccount) GetBalance(cluster.GrainContext, *emptypb.Empty) (*shopv1.Balance, error) {
	return a.balance(), nil
}

func (a *testAccount) Withdraw(_ cluster.GrainContext, req *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	n := req.GetAmount().GetUnits()
	if n > a.units {
		return nil, cluster.NewGrainError("insufficient_funds", "balance %d, asked %d", a.units, n)
	}
	a.units -= n
	a.entries = append(a.entries, &shopv1.Balance_Entry{Delta: -n})
	return a.balance(), nil
}

func (a *testAccount) Crash(cluster.GrainContext, *shopv1.CrashRequest) (*shopv1.Balance, error) {
	panic("account: simulated bug")
}

// Transfer withdraws here and deposits to req.To through the client's
// future, piped back to this grain: the method returns at once and no
// worker waits for the other grain.
func (a *testAccount) Transfer(ctx cluster.GrainContext, req *shopv1.TransferRequest) (*shopv1.Balance, error) {
	n := req.GetAmount().GetUnits()
	if n > a.units {
		return nil, cluster.NewGrainError("insufficient_funds", "balance %d, asked %d", a.units, n)
	}
	a.units -= n
	a.entries = append(a.entries, &shopv1.Balance_Entry{Delta: -n})
	to := shopv1.NewAccountClient(cluster.Get(ctx.System()), req.GetTo())
	to.DepositFuture(&shopv1.DepositRequest{Amount: req.GetAmount()}, 0).PipeTo(ctx.Self())
	return a.balance(), nil
}

// ReceiveMessage gets the piped reply of a transfer's deposit: it records a
// zero entry as the confirmation.
func (a *testAccount) ReceiveMessage(_ cluster.GrainContext, msg any) {
	if _, ok := msg.(*shopv1.Balance); ok {
		a.entries = append(a.entries, &shopv1.Balance_Entry{Delta: 0})
	}
}

// typedAccountKind is the generated kind over testAccount; activations counts
// the activations of each identity.
func typedAccountKind(activations map[string]*atomic.Int32, deactivated chan<- cluster.Identity) cluster.Kind {
	return shopv1.AccountKind(func(id cluster.Identity) shopv1.AccountGrain {
		return &testAccount{id: id, activations: activations[id.ID], deactivated: deactivated}
	})
}

func counters(ids ...string) map[string]*atomic.Int32 {
	m := map[string]*atomic.Int32{}
	for _, id := range ids {
		m[id] = new(atomic.Int32)
	}
	return m
}

// newTypedCluster starts three members on loopback TCP hosting the
// generated Account kind. No serializer is registered by hand: the
// generated kind and client register their messages.
func newTypedCluster(t *testing.T, kind cluster.Kind) *testkit.TestCluster {
	return testkit.NewCluster(t, testkit.Nodes(3), testkit.TCP(), testkit.Kinds(kind),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			// A hang would show as a timeout well after a prompt answer.
			c.RequestTimeout, c.AttemptTimeout = 30*time.Second, 30*time.Second
		}))
}

// TestTypedGrainOverThreeMembers: the generated client calls one grain from
// every member of a three-member cluster over TCP; the calls reach the one
// activation (its state accumulates, its Activated hook ran once), with the
// well-known and imported messages intact. Without the generated
// registration the members could not encode the messages.
func TestTypedGrainOverThreeMembers(t *testing.T) {
	tc := newTypedCluster(t, typedAccountKind(counters("alice"), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for i := range 3 {
		c := shopv1.NewAccountClient(tc.Node(i), "alice")
		b, err := c.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Currency: "EUR", Units: 10}, At: timestamppb(at)})
		if err != nil {
			t.Fatalf("member %d: Deposit: %v", i, err)
		}
		if got := b.GetAmount().GetUnits(); got != int64(10*(i+1)) {
			t.Fatalf("member %d: balance %d, want %d", i, got, 10*(i+1))
		}
	}
	for i := range 3 {
		b, err := shopv1.NewAccountClient(tc.Node(i), "alice").GetBalance(ctx, &emptypb.Empty{})
		if err != nil {
			t.Fatalf("member %d: GetBalance: %v", i, err)
		}
		if b.GetAmount().GetUnits() != 30 || b.GetAmount().GetCurrency() != "EUR" || len(b.GetEntries()) != 3 ||
			!b.GetEntries()[2].GetAt().AsTime().Equal(at) || b.GetActivations() != 1 {
			t.Fatalf("member %d: balance %v", i, b)
		}
	}
}

// TestTypedGrainErrorKeepsCode: a grain method's error reaches callers on
// every member as a *cluster.GrainError with its code and message.
func TestTypedGrainErrorKeepsCode(t *testing.T) {
	tc := newTypedCluster(t, typedAccountKind(counters("bob"), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i := range 3 {
		_, err := shopv1.NewAccountClient(tc.Node(i), "bob").Withdraw(ctx, &shopv1.WithdrawRequest{Amount: &commonv1.Money{Units: 7}})
		var ge *cluster.GrainError
		if !errors.As(err, &ge) || ge.Code != "insufficient_funds" || ge.Message != "balance 0, asked 7" {
			t.Fatalf("member %d: err %v, want GrainError insufficient_funds", i, err)
		}
		if !errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}) || errors.Is(err, &cluster.GrainError{Code: "other"}) {
			t.Fatalf("member %d: errors.Is by code fails for %v", i, err)
		}
	}
}

// TestTypedGrainPanicAnswersPromptly: a panic in a grain method answers the
// caller with CodeInternal at once (the attempt timeout is 30 s; without
// the answer the call would end only at the 20 s deadline, as ErrTimeout),
// and is a supervised failure: the grain restarts (state gone, Activated
// ran again) and serves the next call.
func TestTypedGrainPanicAnswersPromptly(t *testing.T) {
	acts := counters("carol")
	tc := newTypedCluster(t, typedAccountKind(acts, nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := shopv1.NewAccountClient(tc.Node(0), "carol")
	if _, err := c.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 5}}); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_, err := shopv1.NewAccountClient(tc.Node(i), "carol").Crash(ctx, &shopv1.CrashRequest{})
		var ge *cluster.GrainError
		if !errors.As(err, &ge) || ge.Code != cluster.CodeInternal {
			t.Fatalf("member %d: Crash: %v, want GrainError %q", i, err, cluster.CodeInternal)
		}
	}
	b, err := c.GetBalance(ctx, &emptypb.Empty{})
	if err != nil {
		t.Fatal(err)
	}
	if b.GetAmount().GetUnits() != 0 || b.GetActivations() != 4 {
		t.Fatalf("after three panics: %v, want balance 0 and 4 activations (restarted each time)", b)
	}
}

// TestTypedGrainFutureFromGrain: a grain calls another through the
// client's Future variant and pipes the reply to itself; its method returns
// at once and the piped reply arrives in ReceiveMessage.
func TestTypedGrainFutureFromGrain(t *testing.T) {
	tc := newTypedCluster(t, typedAccountKind(counters("dave", "erin"), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dave, erin := shopv1.NewAccountClient(tc.Node(0), "dave"), shopv1.NewAccountClient(tc.Node(1), "erin")
	if _, err := dave.Deposit(ctx, &shopv1.DepositRequest{Amount: &commonv1.Money{Units: 9}}); err != nil {
		t.Fatal(err)
	}
	b, err := dave.Transfer(ctx, &shopv1.TransferRequest{To: "erin", Amount: &commonv1.Money{Units: 4}})
	if err != nil || b.GetAmount().GetUnits() != 5 {
		t.Fatalf("Transfer: %v, %v", b, err)
	}
	testkit.Eventually(t, func() bool {
		b, err := dave.GetBalance(ctx, &emptypb.Empty{})
		return err == nil && len(b.GetEntries()) == 3 // deposit, withdrawal, confirmation
	}, 20*time.Second, "the piped deposit reply never reached dave")
	eb, err := erin.GetBalance(ctx, &emptypb.Empty{})
	if err != nil || eb.GetAmount().GetUnits() != 4 {
		t.Fatalf("erin: %v, %v", eb, err)
	}
}

// TestTypedGrainFutureError: the Future variant fails with the grain's
// *GrainError.
func TestTypedGrainFutureError(t *testing.T) {
	tc := newTypedCluster(t, typedAccountKind(counters("frank"), nil))
	f := shopv1.NewAccountClient(tc.Node(2), "frank").WithdrawFuture(&shopv1.WithdrawRequest{Amount: &commonv1.Money{Units: 1}}, 20*time.Second)
	_, err := f.Result()
	if !errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}) {
		t.Fatalf("future: %v", err)
	}
}

func timestamppb(t time.Time) *tspb.Timestamp { return tspb.New(t) }

// TestTypedGrainActivatedError: an error from the Activated hook fails the
// activation; the caller gets *ActivationFailedError with the hook's error,
// at once (not retried until the deadline).
func TestTypedGrainActivatedError(t *testing.T) {
	tc := newTypedCluster(t, typedAccountKind(counters("broken"), nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := shopv1.NewAccountClient(tc.Node(0), "broken").GetBalance(ctx, &emptypb.Empty{})
	var af *cluster.ActivationFailedError
	if !errors.As(err, &af) || !errors.Is(err, cluster.ErrActivationFailed) {
		t.Fatalf("err %v, want *ActivationFailedError", err)
	}
	if ctx.Err() != nil {
		t.Fatalf("the call ended at the deadline: %v", err)
	}
}
