package testkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestDiffOrderFromOneCaller: Sends and Requests mixed, from one caller,
// reach the grain in the order made on both sides, and only the Requests
// have a sender (a cluster Send has none).
func TestDiffOrderFromOneCaller(t *testing.T) {
	id := cluster.NewIdentity("diff", "a")

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff"}), id)
	g.Tell(&dNote{S: "1"})
	if r := testkit.RequestGrain[string](g, &dNote{S: "2"}); r != "ok 2" {
		t.Fatalf("NewGrain: reply %q", r)
	}
	g.Tell(&dNote{S: "3"})
	g.Tell(&dNote{S: "4"})
	if r := testkit.RequestGrain[string](g, &dNote{S: "5"}); r != "ok 5" {
		t.Fatalf("NewGrain: reply %q", r)
	}
	g.Tell(&dNote{S: "6"})
	g.Probe.ExpectNoMsg(0)

	rj := newJournal()
	tc := diffCluster(t, 2, diffKind(rj, diffConf{kind: "diff"}))
	c, ctx := tc.Node(0), diffCtx(t)
	c.Send(id, &dNote{S: "1"})
	if r, err := testkit.Request[string](ctx, c, id, &dNote{S: "2"}); err != nil || r != "ok 2" {
		t.Fatalf("cluster: reply %q, %v", r, err)
	}
	c.Send(id, &dNote{S: "3"})
	c.Send(id, &dNote{S: "4"})
	f := c.RequestFuture(id, &dNote{S: "5"}, 0)
	c.Send(id, &dNote{S: "6"})
	if r, err := f.Result(); err != nil || r != "ok 5" {
		t.Fatalf("cluster: reply %v, %v", r, err)
	}
	real := rj.waitFor(t, 10*time.Second, "note 6", func(l []string) bool { return count(l, "a note 6 sender=false") == 1 })
	requireSame(t, "the grain's journal", kj.snapshot(), real)
}

// TestDiffReplyErrors: what a caller gets from the grain, on both sides:
// a reply; a grain's panic (untyped: no reply, the grain restarts and
// keeps serving); a call to a kind no member hosts (ErrNoSuchKind); an
// unanswered call (ErrTimeout at its deadline); an invalid identity.
func TestDiffReplyErrors(t *testing.T) {
	id := cluster.NewIdentity("diff", "a")
	nobody := cluster.NewIdentity("nokind", "x")
	silent := cluster.NewIdentity("diff", "silent")

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff"}), id)
	g.Send(&dPanic{})
	g.Probe.ExpectNoMsg(0)
	if r := testkit.RequestGrain[string](g, &dNote{S: "after"}); r != "ok after" {
		t.Fatalf("NewGrain: after the panic: %q", r)
	}
	kitCalls := []string{
		testkit.RequestGrain[string](g, &dCall{To: nobody, S: "x"}),
	}
	// The grain's call to another diff grain, which never answers: a
	// probe stands in for it and lets the future time out.
	p := g.StubProbe("diff")
	g.Send(&dCall{To: silent, Msg: &dSilent{}, S: "s", Timeout: 200 * time.Millisecond})
	testkit.ExpectGrainCall[*dSilent](p, 0)
	kitCalls = append(kitCalls, testkit.ExpectMsg[string](g.Probe, time.Minute))
	g.Stub("diff", func(cluster.Identity, any) (any, error) { return "unused", nil })
	kitCalls = append(kitCalls, testkit.RequestGrain[string](g, &dCall{To: cluster.Identity{Kind: "diff"}, S: "bad"}))

	rj := newJournal()
	tc := diffCluster(t, 1, diffKind(rj, diffConf{kind: "diff"}))
	c, ctx := tc.Node(0), diffCtx(t)
	if r, err := testkit.Request[string](ctx, c, id, &dNote{S: "before"}); err != nil || r != "ok before" {
		t.Fatalf("cluster: %q, %v", r, err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := cluster.Request[string](short, c, id, &dPanic{})
	cancel()
	if !errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("cluster: a panicking untyped grain: %v, want ErrTimeout (no reply)", err)
	}
	if r, err := testkit.Request[string](ctx, c, id, &dNote{S: "after"}); err != nil || r != "ok after" {
		t.Fatalf("cluster: after the panic: %q, %v", r, err)
	}
	var realCalls []string
	for _, call := range []*dCall{{To: nobody, S: "x"}, {To: silent, Msg: &dSilent{}, S: "s", Timeout: 200 * time.Millisecond}, {To: cluster.Identity{Kind: "diff"}, S: "bad"}} {
		r, err := testkit.Request[string](ctx, c, id, call)
		if err != nil {
			t.Fatalf("cluster: %+v: %v", call, err)
		}
		realCalls = append(realCalls, r)
	}
	requireSame(t, "the calls' outcomes", kitCalls, realCalls)

	// The grain's journal (the cluster's has the grain's "before" first,
	// and the silent grain's activation).
	kit := kj.snapshot()
	var real []string
	for _, l := range rj.snapshot() {
		if l != "a note before sender=true" && l[:2] == "a " {
			real = append(real, l)
		}
	}
	requireSame(t, "the grain's journal", kit, real)
}

// TestDiffNilMessage: a nil message. The cluster refuses a Request of nil
// at once with an error that wraps remote.ErrUnknownType (nothing reaches
// the grain) and drops a Send of nil (docs/cluster.md, Calling grains);
// a nil protobuf pointer given to Call arrives as an empty message.
// Before, NewGrain handed the grain the nil (g.Send(nil), g.Tell(nil),
// RequestGrain(g, nil), CallGrain(g, nil)) and the nil pointer as is.
func TestDiffNilMessage(t *testing.T) {
	id := cluster.NewIdentity("diff", "a")

	rj := newJournal()
	tc := diffCluster(t, 1, diffKind(rj, diffConf{kind: "diff"}))
	c, ctx := tc.Node(0), diffCtx(t)
	_, realErr := testkit.Request[string](ctx, c, id, nil)
	c.Send(id, nil)
	if r, err := testkit.Request[string](ctx, c, id, &dNote{S: "x"}); err != nil || r != "ok x" {
		t.Fatalf("cluster: %q, %v", r, err)
	}
	real := rj.snapshot()

	rec := newRecorder(t)
	kj := newJournal()
	g := testkit.NewGrain(rec, diffKind(kj, diffConf{kind: "diff"}), id)
	g.Send(nil)
	g.Tell(nil)
	_ = testkit.RequestGrain[string](g, nil)
	_, kitErr := testkit.CallGrain[string](g, nil)
	g.Probe.ExpectNoMsg(0)
	if r := testkit.RequestGrain[string](g, &dNote{S: "x"}); r != "ok x" {
		t.Fatalf("NewGrain: %q", r)
	}
	requireSame(t, "the grain's journal", kj.snapshot(), real)
	if !errors.Is(realErr, remote.ErrUnknownType) || !errors.Is(kitErr, remote.ErrUnknownType) || kitErr.Error() != realErr.Error() ||
		!errors.Is(kitErr, testkit.ErrNilRequest) {
		t.Fatalf("a nil request: NewGrain %v, cluster %v", kitErr, realErr)
	}
	if e, f := rec.Errors(), rec.Fatals(); len(e) != 1 || !strings.Contains(e[0], realErr.Error()) || len(f) != 1 || !strings.Contains(f[0], realErr.Error()) {
		t.Fatalf("NewGrain's test failures: errors %q, fatals %q", e, f)
	}
}

// TestDiffTypedNilRequest: a typed grain called with a nil request
// pointer gets an empty message, under NewGrain as through a cluster's
// client (cluster.Call).
func TestDiffTypedNilRequest(t *testing.T) {
	kind := shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
		var n int
		return &nilAccount{unitAccount{store: testkit.NewFencedStore[int64](nil), activated: &n, deactivate: &n}}
	})
	id := cluster.NewIdentity(shopv1.AccountKindName, "alice")

	g := testkit.NewGrain(t, kind, id)
	kb, kerr := testkit.CallGrain[*shopv1.Balance](g, (*shopv1.DepositRequest)(nil))

	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind))
	rb, rerr := shopv1.NewAccountClient(tc.Node(0), id.ID).Deposit(diffCtx(t), nil)
	if kerr != nil || rerr != nil || kb.GetAmount().GetUnits() != rb.GetAmount().GetUnits() || kb.GetAmount().GetUnits() != 1 {
		t.Fatalf("Deposit(nil): NewGrain %v, %v; cluster %v, %v", kb, kerr, rb, rerr)
	}
}

// nilAccount answers a Deposit with 1 when the request is not nil (an
// empty one), with 2 when it is the nil pointer.
type nilAccount struct{ unitAccount }

func (*nilAccount) Deposit(_ cluster.GrainContext, req *shopv1.DepositRequest) (*shopv1.Balance, error) {
	if req == nil {
		return &shopv1.Balance{Amount: units(2)}, nil
	}
	return &shopv1.Balance{Amount: units(1)}, nil
}
