package testkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	commonv1 "github.com/fraktor-go/fraktor/internal/testpb/common/v1"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

func newTeller(t *testing.T, timeout time.Duration, opts ...testkit.Option) *testkit.Grain {
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain { return &teller{timeout: timeout} })
	return testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"), opts...)
}

func units(n int64) *commonv1.Money { return &commonv1.Money{Units: n} }

// TestGrainStubAnswersGeneratedClient: a stub answers the calls the grain
// makes through a generated client, future and blocking alike; the stub
// sees the identity and the request. Without a cluster, NewAccountClient
// and its calls panicked on the nil *cluster.Cluster.
func TestGrainStubAnswersGeneratedClient(t *testing.T) {
	g := newTeller(t, 0)
	var seen []string
	g.Stub(shopv1.AccountKindName, func(id cluster.Identity, msg any) (any, error) {
		req := msg.(*shopv1.DepositRequest)
		seen = append(seen, id.ID)
		return &shopv1.Balance{Amount: units(100 + req.GetAmount().GetUnits())}, nil
	})
	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "bob", Amount: units(5)})
	if err != nil || b.GetAmount().GetUnits() != 105 {
		t.Fatalf("Transfer (future): %v, %v", b, err)
	}
	b, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.DepositRequest{Amount: units(7)})
	if err != nil || b.GetAmount().GetUnits() != 107 {
		t.Fatalf("Deposit (blocking): %v, %v", b, err)
	}
	if len(seen) != 2 || seen[0] != "bob" || seen[1] != "bob" {
		t.Fatalf("stub saw %v, want [bob bob]", seen)
	}
}

// TestGrainStubErrors: what a stub returns or does reaches the grain as a
// real call's would: its *GrainError with the code, a panic as
// CodeInternal, a cluster error as is; a kind without a stub is
// ErrNoSuchKind. Future and blocking calls alike. (The teller returns the
// error it got, so its caller gets that as a grain method's error: the
// cluster errors as CodeUnknown with their text; TestGrainStubUntyped
// checks them with errors.Is.)
func TestGrainStubErrors(t *testing.T) {
	grainErr := func(code, text string) func(error) bool {
		return func(err error) bool {
			var ge *cluster.GrainError
			return errors.As(err, &ge) && ge.Code == code && strings.Contains(ge.Message, text)
		}
	}
	cases := []struct {
		name  string
		stub  testkit.GrainStub // nil: no stub
		check func(error) bool
	}{
		{"grain error", func(cluster.Identity, any) (any, error) {
			return nil, cluster.NewGrainError("insufficient_funds", "no")
		}, grainErr("insufficient_funds", "no")},
		{"panic", func(cluster.Identity, any) (any, error) { panic("stub bug") },
			grainErr(cluster.CodeInternal, "stub bug")},
		{"cluster error", func(cluster.Identity, any) (any, error) {
			return nil, &cluster.ActivationFailedError{Key: cluster.NewIdentity(shopv1.AccountKindName, "bob")}
		}, grainErr(cluster.CodeUnknown, "activation of fraktor.test.shop.v1.Account/bob failed")},
		{"no stub", nil, grainErr(cluster.CodeUnknown, cluster.ErrNoSuchKind.Error())},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var opts []testkit.Option
			if tc.stub != nil {
				opts = append(opts, testkit.WithGrainStub(shopv1.AccountKindName, tc.stub))
			}
			g := newTeller(t, 0, opts...)
			for _, req := range []any{&shopv1.TransferRequest{To: "bob", Amount: units(1)}, &shopv1.DepositRequest{Amount: units(1)}} {
				if _, err := testkit.CallGrain[*shopv1.Balance](g, req); !tc.check(err) {
					t.Fatalf("%T: got %v", req, err)
				}
			}
		})
	}
}

// TestGrainStubProbeAnswers: a probe stands in for the other grain: the
// test takes the call, checks it and answers it; the grain's reply comes
// once it has.
func TestGrainStubProbeAnswers(t *testing.T) {
	g := newTeller(t, time.Second)
	calls := g.StubProbe(shopv1.AccountKindName)
	g.Send(&shopv1.TransferRequest{To: "bob", Amount: units(3)})
	call, req := testkit.ExpectGrainCall[*shopv1.DepositRequest](calls, 0)
	if call.Identity.ID != "bob" || req.GetAmount().GetUnits() != 3 || call.OneWay() {
		t.Fatalf("call %v %v, oneway %v", call.Identity, req, call.OneWay())
	}
	g.Probe.ExpectNoMsg(0) // the grain waits for the answer
	if !call.Reply(&shopv1.Balance{Amount: units(9)}) {
		t.Fatal("Reply was not the answer")
	}
	b, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
	if err != nil || b.GetAmount().GetUnits() != 9 {
		t.Fatalf("Transfer: %v, %v", b, err)
	}
	if call.Reply(&shopv1.Balance{}) || call.Fail(cluster.ErrTimeout) {
		t.Fatal("a second answer counted")
	}
}

// TestGrainStubProbeTimeout: a call nobody answers fails with
// cluster.ErrTimeout at its timeout, in virtual time; an answer after it
// is dropped.
func TestGrainStubProbeTimeout(t *testing.T) {
	g := newTeller(t, time.Second)
	calls := g.StubProbe(shopv1.AccountKindName)
	g.Send(&shopv1.TransferRequest{To: "bob", Amount: units(3)})
	call, _ := testkit.ExpectGrainCall[*shopv1.DepositRequest](calls, 0)
	g.Sys.Advance(999 * time.Millisecond)
	g.Probe.ExpectNoMsg(0)
	g.Sys.Advance(time.Millisecond)
	// The teller's deferred reply carries the future's error as a grain
	// method's error does: its text, CodeUnknown.
	_, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
	var ge *cluster.GrainError
	if !errors.As(err, &ge) || ge.Message != cluster.ErrTimeout.Error()+": "+call.Identity.String()+": context deadline exceeded" {
		t.Fatalf("Transfer: %v, want the timeout", err)
	}
	if call.Reply(&shopv1.Balance{}) {
		t.Fatal("an answer after the timeout counted")
	}
}

// relay is an untyped grain that calls the grain "target/x" as told:
// Request, RequestFuture (piped back) or Send, and tells the caller what
// came back.
type relay struct{ sender *actor.PID }

type (
	viaRequest struct{ ctx context.Context }
	viaFuture  struct{}
	viaSend    struct{}
	relayed    struct {
		reply any
		err   error
	}
)

var target = cluster.NewIdentity("target", "x")

func (r *relay) Receive(ctx actor.Context) {
	c := cluster.Get(ctx.System())
	switch m := ctx.Message().(type) {
	case viaRequest:
		v, err := cluster.Request[string](m.ctx, c, target, "ping")
		ctx.Respond(relayed{v, err})
	case viaFuture:
		r.sender = ctx.Sender()
		c.RequestFuture(target, "ping", time.Second).PipeTo(ctx.Self())
	case viaSend:
		c.Send(target, "ping")
	case string:
		ctx.Send(r.sender, relayed{reply: m})
	case error:
		ctx.Send(r.sender, relayed{err: m})
	}
}

// TestGrainStubUntyped: cluster.Get's Request, RequestFuture and Send from
// a plain grain reach the stub; a Request whose deadline has passed fails
// with ErrTimeout without reaching it.
func TestGrainStubUntyped(t *testing.T) {
	kind := cluster.NewKind("relay", actor.PropsFromProducer(func() actor.Actor { return &relay{} }))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("relay", "r"))
	var got []any
	g.Stub("target", func(id cluster.Identity, msg any) (any, error) {
		got = append(got, msg)
		return "pong " + id.ID, nil
	})
	if r := testkit.RequestGrain[relayed](g, viaRequest{context.Background()}); r.reply != "pong x" || r.err != nil {
		t.Fatalf("Request: %+v", r)
	}
	if r := testkit.RequestGrain[relayed](g, viaFuture{}); r.reply != "pong x" || r.err != nil {
		t.Fatalf("RequestFuture: %+v", r)
	}
	g.Send(viaSend{})
	if len(got) != 3 {
		t.Fatalf("stub got %v, want 3 pings", got)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if r := testkit.RequestGrain[relayed](g, viaRequest{ended}); !errors.Is(r.err, cluster.ErrTimeout) {
		t.Fatalf("Request past its deadline: %+v", r)
	}
	if len(got) != 3 {
		t.Fatalf("the stub got the call past its deadline: %v", got)
	}
	g.Stub("target", func(cluster.Identity, any) (any, error) { return nil, cluster.ErrBlocked })
	for _, msg := range []any{viaRequest{context.Background()}, viaFuture{}} {
		if r := testkit.RequestGrain[relayed](g, msg); !errors.Is(r.err, cluster.ErrBlocked) {
			t.Fatalf("%T: %+v, want the stub's ErrBlocked as is", msg, r)
		}
	}
	g.Stub("target", func(cluster.Identity, any) (any, error) { return 42, nil })
	var mismatch *actor.TypeMismatchError
	if r := testkit.RequestGrain[relayed](g, viaRequest{context.Background()}); !errors.As(r.err, &mismatch) {
		t.Fatalf("Request[string] of an int reply: %+v", r)
	}
}

// TestGrainNoStubIsNoSuchKind: a call to a kind the test stubbed not
// fails at once with cluster.ErrNoSuchKind, as one to a kind no member
// hosts; a Send to it is dropped.
func TestGrainNoStubIsNoSuchKind(t *testing.T) {
	kind := cluster.NewKind("relay", actor.PropsFromProducer(func() actor.Actor { return &relay{} }))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("relay", "r"))
	for _, msg := range []any{viaRequest{context.Background()}, viaFuture{}} {
		if r := testkit.RequestGrain[relayed](g, msg); !errors.Is(r.err, cluster.ErrNoSuchKind) {
			t.Fatalf("%T: %+v", msg, r)
		}
	}
	g.Send(viaSend{})
	g.Probe.ExpectNoMsg(0)
}

// TestGrainStubProbeGetsSend: a Send reaches the probe as a one-way call,
// which takes no answer.
func TestGrainStubProbeGetsSend(t *testing.T) {
	kind := cluster.NewKind("relay", actor.PropsFromProducer(func() actor.Actor { return &relay{} }))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("relay", "r"))
	calls := g.StubProbe("target")
	g.Send(viaSend{})
	call, msg := testkit.ExpectGrainCall[string](calls, 0)
	if !call.OneWay() || msg != "ping" || call.Identity != target {
		t.Fatalf("call %+v", call)
	}
	if call.Reply("pong") {
		t.Fatal("a Send took an answer")
	}
}

// activating calls the target grain from its Started handler.
type activating struct{ got any }

func (a *activating) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		a.got, _ = cluster.Request[string](context.Background(), cluster.Get(ctx.System()), target, "load")
	case string:
		ctx.Respond(a.got)
	}
}

// TestWithGrainStubDuringActivation: WithGrainStub answers the calls the
// grain makes while NewGrain activates it.
func TestWithGrainStubDuringActivation(t *testing.T) {
	kind := cluster.NewKind("activating", actor.PropsFromProducer(func() actor.Actor { return &activating{} }))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("activating", "a"),
		testkit.WithGrainStub("target", func(cluster.Identity, any) (any, error) { return "state", nil }))
	if got := testkit.RequestGrain[string](g, "get"); got != "state" {
		t.Fatalf("loaded %q, want the stub's", got)
	}
}

// TestGrainStubProbeRefusesBlocking: a blocking call to a kind a probe
// stands in for fails at once with ErrTimeout, and the test is told to
// stub the kind; the probe gets nothing. Before, the call waited out its
// deadline in real time (5 s by default), since the probe's test
// goroutine was the caller.
func TestGrainStubProbeRefusesBlocking(t *testing.T) {
	rec := newRecorder(t)
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain { return &teller{} })
	g := testkit.NewGrain(rec, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	calls := g.StubProbe(shopv1.AccountKindName)
	_, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.DepositRequest{Amount: units(1)})
	var ge *cluster.GrainError
	if !errors.As(err, &ge) || !strings.HasPrefix(ge.Message, cluster.ErrTimeout.Error()) {
		t.Fatalf("blocking call: %v, want the timeout", err)
	}
	if errs := rec.Errors(); len(errs) != 1 || !strings.Contains(errs[0], "Grain.Stub") {
		t.Fatalf("test errors %q", errs)
	}
	if calls.Len() != 0 {
		t.Fatalf("the probe got %d calls", calls.Len())
	}
}

// TestWithGrainStubKeepsCallersExtensions: WithGrainStub adds its
// installer to a copy of the extensions a WithConfig gave, never into the
// spare capacity of the caller's slice, which another system made from
// the same config would then share.
func TestWithGrainStubKeepsCallersExtensions(t *testing.T) {
	exts := make([]actor.ExtensionInstaller, 0, 4)
	cfg := actor.SystemConfig{Extensions: exts}
	stub := func(cluster.Identity, any) (any, error) { return "x", nil }
	testkit.NewManualSystem(t, testkit.WithConfig(cfg), testkit.WithGrainStub("target", stub))
	if spare := exts[:1][0]; spare != nil {
		t.Fatalf("the caller's slice got %T", spare)
	}
}

// TestExpectGrainReply: a reply sent to g.Probe by Grain.Send comes back
// typed, an error answer as the *cluster.GrainError cluster.Call gives
// (before, the probe held the runtime's wire message, of an internal
// package, which ExpectMsg[*cluster.GrainError] did not match); another
// message, or none, fails the test.
func TestExpectGrainReply(t *testing.T) {
	var activated, deactivated int
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		return &unitAccount{store: testkit.NewFencedStore[int64](nil), activated: &activated, deactivate: &deactivated}
	})
	g := testkit.NewGrain(t, kind, cluster.NewIdentity(shopv1.AccountKindName, "alice"))
	g.Send(&shopv1.DepositRequest{Amount: units(4)})
	if b, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0); err != nil || b.GetAmount().GetUnits() != 4 {
		t.Fatalf("Deposit: %v, %v", b, err)
	}
	g.Send(&shopv1.WithdrawRequest{Amount: units(9)})
	_, err := testkit.ExpectGrainReply[*shopv1.Balance](g.Probe, 0)
	if !errors.Is(err, &cluster.GrainError{Code: "insufficient_funds"}) {
		t.Fatalf("Withdraw: %v (%T), want the grain's error", err, err)
	}

	rec := newRecorder(t)
	sys := testkit.NewSystem(rec)
	p := testkit.NewProbe(rec, sys)
	sys.Root().Send(p.PID(), "not a reply")
	if _, err := testkit.ExpectGrainReply[*shopv1.Balance](p, 0); err != nil || len(rec.fatals) != 1 || !strings.Contains(rec.fatals[0], "ExpectGrainReply") {
		t.Fatalf("a message that is no reply: err %v, fatals %q", err, rec.fatals)
	}
	if _, err := testkit.ExpectGrainReply[*shopv1.Balance](p, time.Millisecond); err != nil || len(rec.fatals) != 2 {
		t.Fatalf("no message: err %v, fatals %q", err, rec.fatals)
	}
}
