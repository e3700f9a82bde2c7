package testkit_test

import (
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// requireLines fails the test unless the journal has want lines equal to
// line.
func requireLines(t *testing.T, j *journal, line string, want int, when string) {
	t.Helper()
	if l := j.snapshot(); count(l, line) != want {
		t.Fatalf("%s: %d × %q, want %d:%s", when, count(l, line), line, want, lines(l))
	}
}

// Under NewGrain, as in the cluster, a grain waiting for a ReenterAfter
// continuation is not idle: it outlives its idle timeout while the call
// it made is not answered, and its idle clock starts when the
// continuation has run, not at its last message. Before, NewGrain counted
// only messages and passivated it at its idle timeout, dropping the
// continuation.
func TestGrainIdleSparesGrainWithContinuation(t *testing.T) {
	const idle = 10 * time.Second
	j := newJournal()
	g := testkit.NewGrain(t, diffKind(j, diffConf{kind: "diff", idle: idle}), cluster.NewIdentity("diff", "a"))
	gate := g.StubProbe("gate")
	g.Tell(&dCall{To: cluster.NewIdentity("gate", "b"), S: "x", Timeout: time.Hour})
	call, _ := testkit.ExpectGrainCall[*dNote](gate, 0)

	g.Sys.Advance(5 * idle / 2) // past two idle checks
	requireLines(t, j, "a stopping", 0, "waiting for the call")
	call.Reply("ok x")
	g.Sys.RunUntilIdle()
	requireLines(t, j, "a call gate/b x: reply ok x", 1, "after the reply")

	// Idle from the continuation on: the check due at 3×idle finds it
	// active for half the timeout only.
	g.Sys.Advance(idle - time.Millisecond)
	requireLines(t, j, "a stopping", 0, "idle for less than the timeout since the continuation ran")
	g.Sys.Advance(time.Millisecond)
	requireLines(t, j, "a stopped", 1, "idle for the timeout since the continuation ran")
}

// A restart drops the continuations that have not run, and their count:
// the restarted grain is idle, and passivates at its idle timeout, as in
// the cluster (TestIdleTimeoutSparesGrainWithContinuation). Counted but
// not dropped, it would never passivate.
func TestGrainIdleRestartDropsContinuations(t *testing.T) {
	const idle = 10 * time.Second
	j := newJournal()
	g := testkit.NewGrain(t, diffKind(j, diffConf{kind: "diff", idle: idle}), cluster.NewIdentity("diff", "a"))
	gate := g.StubProbe("gate")
	for _, s := range []string{"x", "y"} {
		g.Tell(&dCall{To: cluster.NewIdentity("gate", "b"), S: s, Timeout: time.Hour})
		testkit.ExpectGrainCall[*dNote](gate, 0) // never answered
	}
	g.Tell(&dPanic{})
	requireLines(t, j, "a restarting", 1, "after the panic")
	g.Sys.Advance(idle - time.Millisecond)
	requireLines(t, j, "a stopping", 0, "idle for less than the timeout since the restart")
	g.Sys.Advance(time.Millisecond)
	requireLines(t, j, "a stopped", 1, "idle for the timeout since the restart")
}

// heldAccount is a generated grain whose Deposit defers its reply and
// hands it to the test (*held), which sends it when it likes: a grain
// waiting for another that answers late. Crash panics.
type heldAccount struct {
	held             **cluster.DeferredReply[*shopv1.Balance]
	deactivated, ran *int
}

func (a *heldAccount) Deposit(ctx cluster.GrainContext, _ *shopv1.DepositRequest) (*shopv1.Balance, error) {
	*a.held = cluster.DeferReply[*shopv1.Balance](ctx)
	return nil, nil
}

func (a *heldAccount) Deactivating(cluster.GrainContext) { *a.deactivated++ }

func (a *heldAccount) GetBalance(cluster.GrainContext, *emptypb.Empty) (*shopv1.Balance, error) {
	return &shopv1.Balance{}, nil
}

// Withdraw deposits to bob through the client's future and answers at
// once; the continuation that waits for bob's answer counts *ran.
func (a *heldAccount) Withdraw(ctx cluster.GrainContext, req *shopv1.WithdrawRequest) (*shopv1.Balance, error) {
	bob := shopv1.NewAccountClient(cluster.Get(ctx.System()), "bob")
	ctx.ReenterAfter(bob.DepositFuture(&shopv1.DepositRequest{Amount: req.GetAmount()}, time.Hour), func(any, error) { *a.ran++ })
	return &shopv1.Balance{}, nil
}

func (a *heldAccount) Crash(cluster.GrainContext, *shopv1.CrashRequest) (*shopv1.Balance, error) {
	panic("held: simulated bug")
}

func (a *heldAccount) Transfer(cluster.GrainContext, *shopv1.TransferRequest) (*shopv1.Balance, error) {
	return &shopv1.Balance{}, nil
}

// Under NewGrain, as in the cluster (TestIdleTimeoutSparesGrainWithDeferredReply),
// a typed grain with a deferred reply it has not sent is not idle: it is
// not passivated (its caller does not get CodeAbandoned), and its idle
// clock starts when the reply is sent, here from another goroutine. A
// reply abandoned by a restart ends its wait too. Before, NewGrain
// passivated the grain at its idle timeout and abandoned the reply.
func TestGrainIdleSparesGrainWithDeferredReply(t *testing.T) {
	const idle = 10 * time.Second
	var held *cluster.DeferredReply[*shopv1.Balance]
	var deactivated int
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		return &heldAccount{held: &held, deactivated: &deactivated, ran: new(int)}
	}, cluster.WithIdleTimeout(idle))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))

	g.Send(&shopv1.DepositRequest{Amount: units(3)})
	if held == nil || g.Probe.Len() != 0 {
		t.Fatalf("the reply was not deferred (%d replies)", g.Probe.Len())
	}
	g.Sys.Advance(5 * idle / 2)
	if deactivated != 0 || g.Probe.Len() != 0 {
		t.Fatalf("passivated while its reply was deferred: %d deactivations, %d replies", deactivated, g.Probe.Len())
	}
	sent := make(chan bool)
	go func() { sent <- held.Reply(&shopv1.Balance{Amount: units(3)}, nil) }()
	if !<-sent {
		t.Fatal("the deferred reply was sent already")
	}
	b, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
	if err != nil || b.GetAmount().GetUnits() != 3 {
		t.Fatalf("the caller got %v, %v", b, err)
	}
	g.Sys.Advance(idle - time.Millisecond)
	if deactivated != 0 {
		t.Fatal("passivated before its idle timeout had passed since the reply")
	}
	g.Sys.Advance(time.Millisecond)
	if deactivated != 1 {
		t.Fatalf("%d deactivations at the idle timeout after the reply, want 1", deactivated)
	}

	// A restart abandons the reply, which ends the wait.
	held = nil
	g.Send(&shopv1.DepositRequest{Amount: units(1)})
	if held == nil {
		t.Fatal("the reply was not deferred")
	}
	if _, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.CrashRequest{}); errClass(err) != "GrainError("+cluster.CodeInternal+")" {
		t.Fatalf("the crash: %v", err)
	}
	if _, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0); errClass(err) != "GrainError("+cluster.CodeAbandoned+")" {
		t.Fatalf("the deferred reply at the restart: %v", err)
	}
	g.Sys.Advance(idle)
	if deactivated != 2 {
		t.Fatalf("%d deactivations at the idle timeout after the restart, want 2", deactivated)
	}
}

// A typed grain's ReenterAfter, called on its GrainContext, is counted as
// an untyped grain's is: the grain is not idle until the continuation has
// run.
func TestGrainIdleSparesTypedGrainWithContinuation(t *testing.T) {
	const idle = 10 * time.Second
	var deactivated, ran int
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		return &heldAccount{held: new(*cluster.DeferredReply[*shopv1.Balance]), deactivated: &deactivated, ran: &ran}
	}, cluster.WithIdleTimeout(idle))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	bob := g.StubProbe(shopv1.AccountKindName)

	if _, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.WithdrawRequest{Amount: units(2)}); err != nil {
		t.Fatal(err)
	}
	call, _ := testkit.ExpectGrainCall[*shopv1.DepositRequest](bob, 0)
	g.Sys.Advance(5 * idle / 2)
	if deactivated != 0 || ran != 0 {
		t.Fatalf("passivated while its continuation waited: %d deactivations, %d continuations run", deactivated, ran)
	}
	call.Reply(&shopv1.Balance{Amount: units(2)})
	g.Sys.RunUntilIdle()
	if ran != 1 {
		t.Fatalf("%d continuations run, want 1", ran)
	}
	g.Sys.Advance(idle - time.Millisecond)
	if deactivated != 0 {
		t.Fatal("passivated before its idle timeout had passed since the continuation ran")
	}
	g.Sys.Advance(time.Millisecond)
	if deactivated != 1 {
		t.Fatalf("%d deactivations at the idle timeout after the continuation, want 1", deactivated)
	}
}
