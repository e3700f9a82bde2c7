package testkit_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestDiffIdlePassivationAndTimers: an activation that receives nothing
// for its kind's idle timeout is passivated (Stopping, Stopped) on both
// sides; a periodic timer's ticks shorter than the timeout keep it
// active on both (docs/cluster.md, Kinds); once the timer is cancelled
// it passivates; the next message starts a new activation with a greater
// token.
func TestDiffIdlePassivationAndTimers(t *testing.T) {
	const idle = 10 * time.Second
	id := cluster.NewIdentity("diff", "a")

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff", idle: idle}), id)
	if r := testkit.RequestGrain[string](g, &dTick{Every: 3 * time.Second}); r != "ticking" {
		t.Fatalf("NewGrain: %q", r)
	}
	g.Sys.Advance(4 * idle)
	kitTicking := kj.snapshot()
	if r := testkit.RequestGrain[string](g, &dUntick{}); r != "unticked" {
		t.Fatalf("NewGrain: %q", r)
	}
	g.Sys.Advance(idle)
	kitIdle := kj.snapshot()
	kitSeq := testkit.RequestGrain[uint64](g, &dToken{})

	rj := newJournal()
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime(), testkit.Kinds(diffKind(rj, diffConf{kind: "diff", idle: idle})))
	c := tc.Node(0)
	f := c.RequestFuture(id, &dTick{Every: 3 * time.Second}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the tick is answered")
	if r, err := f.Result(); err != nil || r != "ticking" {
		t.Fatalf("cluster: %v, %v", r, err)
	}
	start := tc.Now()
	tc.Eventually(func() bool { return tc.Now().Sub(start) >= 4*idle }, 5*idle, "time passes")
	realTicking := rj.snapshot()
	f = c.RequestFuture(id, &dUntick{}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the untick is answered")
	tc.Eventually(func() bool { return count(rj.snapshot(), "a stopped") == 1 }, 2*idle, "the grain passivates")
	realIdle := rj.snapshot()
	f = c.RequestFuture(id, &dToken{}, 0)
	tc.Eventually(func() bool { return isDone(f) }, 5*time.Second, "the token is answered")
	r, err := f.Result()
	if err != nil {
		t.Fatalf("cluster: token: %v", err)
	}

	// Ticks while ticking: about 4*idle/3s on both sides (the cluster's
	// clock steps may leave the last out).
	kt, rt := count(kitTicking, "a ticked"), count(realTicking, "a ticked")
	if slices := []int{kt, rt}; kt < 12 || rt < 12 || kt-rt > 1 || rt-kt > 1 || strings.Contains(strings.Join(kitTicking, ","), "stopping") || strings.Contains(strings.Join(realTicking, ","), "stopping") {
		t.Fatalf("ticks %v: a grain whose timer ticks is not passivated on both sides:\nNewGrain:%s\ncluster:%s", slices, lines(kitTicking), lines(realTicking))
	}
	requireSame(t, "the end of the journal", tail(kitIdle, 4), tail(realIdle, 4))
	// A new activation: the next token on both sides.
	if kitSeq != 2 || r.(uint64) < 2 {
		t.Fatalf("tokens after passivation: NewGrain %d, cluster %v", kitSeq, r)
	}
}

func tail(l []string, n int) []string { return l[max(len(l)-n, 0):] }

// TestDiffStopSelfAndPassivate: a grain that stops itself, or passivates,
// gets Stopping and Stopped, and the next message starts a new activation
// (Started again, the next token), on both sides.
func TestDiffStopSelfAndPassivate(t *testing.T) {
	id := cluster.NewIdentity("diff", "a")

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff"}), id)
	g.Send(&dStopSelf{})
	kitSeqs := []uint64{testkit.RequestGrain[uint64](g, &dToken{})}
	g.Send(&dPassivate{})
	kitSeqs = append(kitSeqs, testkit.RequestGrain[uint64](g, &dToken{}))

	rj := newJournal()
	tc := diffCluster(t, 1, diffKind(rj, diffConf{kind: "diff"}))
	c, ctx := tc.Node(0), diffCtx(t)
	first, err := testkit.Request[uint64](ctx, c, id, &dToken{})
	if err != nil {
		t.Fatalf("cluster: %v", err)
	}
	var realSeqs []uint64
	for _, m := range []any{&dStopSelf{}, &dPassivate{}} {
		c.Send(id, m)
		rj.waitFor(t, 10*time.Second, "the stop", func(l []string) bool { return count(l, "a stopped") == len(realSeqs)+1 })
		s, err := testkit.Request[uint64](ctx, c, id, &dToken{})
		if err != nil {
			t.Fatalf("cluster: %v", err)
		}
		realSeqs = append(realSeqs, s-first+1)
	}
	requireSame(t, "the grain's journal", kj.snapshot(), rj.snapshot())
	if kitSeqs[0] != 2 || kitSeqs[1] != 3 || realSeqs[0] < 2 || realSeqs[1] <= realSeqs[0] {
		t.Fatalf("tokens: NewGrain %v, cluster (from the first) %v", kitSeqs, realSeqs)
	}
}

// TestDiffActivationFailure: a Started handler that panics fails the
// activation; the caller gets *cluster.ActivationFailedError with the
// same text on both sides, the activation is not retried for that call
// (one Started per call), and the next call tries a new activation.
func TestDiffActivationFailure(t *testing.T) {
	id := cluster.NewIdentity("diff", "a")

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff", failStart: 2}), id)
	kitErr := g.ActivationError() // NewGrain activated it already
	_, kitErr2 := testkit.CallGrain[string](g, &dNote{S: "1"})
	r, err := testkit.CallGrain[string](g, &dNote{S: "2"})
	if err != nil || r != "ok 2" {
		t.Fatalf("NewGrain: third activation: %q, %v", r, err)
	}

	rj := newJournal()
	tc := diffCluster(t, 1, diffKind(rj, diffConf{kind: "diff", failStart: 2}))
	c, ctx := tc.Node(0), diffCtx(t)
	var realErrs []error
	for _, s := range []string{"0", "1"} {
		_, err := testkit.Request[string](ctx, c, id, &dNote{S: s})
		realErrs = append(realErrs, err)
	}
	if r, err := testkit.Request[string](ctx, c, id, &dNote{S: "2"}); err != nil || r != "ok 2" {
		t.Fatalf("cluster: third activation: %q, %v", r, err)
	}
	for i, pair := range [][2]error{{kitErr, realErrs[0]}, {kitErr2, realErrs[1]}} {
		var ka, ra *cluster.ActivationFailedError
		if !errors.As(pair[0], &ka) || !errors.As(pair[1], &ra) || pair[0].Error() != pair[1].Error() {
			t.Fatalf("activation error %d: NewGrain %v, cluster %v", i, pair[0], pair[1])
		}
	}
	requireSame(t, "the grain's journal", kj.snapshot(), rj.snapshot())
}

// TestDiffReceiveTimeoutAndIdle: a grain's receive timeout shorter than
// its kind's idle timeout. Its tick, a message the grain receives, counts
// as activity on both sides (docs/cluster.md, Kinds: its own timers'
// ticks included), so the grain is not passivated while it is set; once
// it is turned off the grain passivates at the idle timeout.
func TestDiffReceiveTimeoutAndIdle(t *testing.T) {
	const idle = 10 * time.Second
	id := cluster.NewIdentity("diff", "a")
	active := func(l []string) bool { return count(l, "a receive timeout fired") >= 9 && count(l, "a stopping") == 0 }

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff", idle: idle}), id)
	if r := testkit.RequestGrain[string](g, &dIdleTimeout{D: 3 * time.Second}); r != "set" {
		t.Fatalf("NewGrain: %q", r)
	}
	g.Sys.Advance(3 * idle)
	kitActive := kj.snapshot()
	if r := testkit.RequestGrain[string](g, &dIdleTimeout{}); r != "set" {
		t.Fatalf("NewGrain: %q", r)
	}
	g.Sys.Advance(idle)

	rj := newJournal()
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime(), testkit.Kinds(diffKind(rj, diffConf{kind: "diff", idle: idle})))
	f := tc.Node(0).RequestFuture(id, &dIdleTimeout{D: 3 * time.Second}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the receive timeout is set")
	start := tc.Now()
	tc.Eventually(func() bool { return tc.Now().Sub(start) >= 3*idle }, 4*idle, "time passes")
	realActive := rj.snapshot()
	f = tc.Node(0).RequestFuture(id, &dIdleTimeout{}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the receive timeout is off")
	tc.Eventually(func() bool { return count(rj.snapshot(), "a stopped") == 1 }, 2*idle, "the grain passivates")

	if !active(kitActive) || !active(realActive) {
		t.Fatalf("the receive timeout's ticks keep the grain active:\nNewGrain:%s\ncluster:%s", lines(kitActive), lines(realActive))
	}
	requireSame(t, "the end of the journal", tail(kj.snapshot(), 3), tail(rj.snapshot(), 3))
}

// TestDiffTypedGrain: a generated grain's replies, its method's
// *cluster.GrainError, a panic in a method (CodeInternal, then a restart
// that runs Activated again and keeps the activation's token), on both
// sides.
func TestDiffTypedGrain(t *testing.T) {
	id := cluster.NewIdentity(shopv1.AccountKindName, "alice")
	run := func(call func(req any) (*shopv1.Balance, error)) []string {
		var out []string
		for _, req := range []any{
			&shopv1.DepositRequest{Amount: units(3)},
			&shopv1.WithdrawRequest{Amount: units(9)},
			&shopv1.CrashRequest{},
			&shopv1.DepositRequest{Amount: units(1)},
		} {
			b, err := call(req)
			out = append(out, fmt.Sprintf("%T: units %d activated %d, %s", req, b.GetAmount().GetUnits(), b.GetActivations(), errClass(err)))
		}
		return out
	}
	kind := func() cluster.Kind {
		store := testkit.NewFencedStore[int64](nil)
		var n, m int
		return shopv1.AccountKind(func(cluster.Identity) shopv1.AccountGrain {
			return &unitAccount{store: store, activated: &n, deactivate: &m}
		})
	}

	g := testkit.NewGrain(t, kind(), id)
	kit := run(func(req any) (*shopv1.Balance, error) { return testkit.CallGrain[*shopv1.Balance](g, req) })

	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind()))
	client, ctx := shopv1.NewAccountClient(tc.Node(0), id.ID), diffCtx(t)
	real := run(func(req any) (*shopv1.Balance, error) {
		switch r := req.(type) {
		case *shopv1.DepositRequest:
			return client.Deposit(ctx, r)
		case *shopv1.WithdrawRequest:
			return client.Withdraw(ctx, r)
		case *shopv1.CrashRequest:
			return client.Crash(ctx, r)
		}
		return nil, nil
	})
	requireSame(t, "the calls", kit, real)
}
