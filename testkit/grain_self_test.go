package testkit_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	shopv1 "github.com/fraktor-go/fraktor/internal/testpb/shop/v1"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestGrainSelfCallTyped: a typed grain that calls its own identity
// through a generated client's future reaches itself, not the stub of its
// kind, as in the cluster: the teller's Transfer to "alice" (itself)
// runs its own Deposit on a later turn, whose blocking call to "bob" the
// stub answers. A *GrainError of the self-call's method reaches the
// caller as the method's error, as CallFuture gives it. Before, the
// self-call went to the stub of the kind (or failed with ErrNoSuchKind
// without one).
func TestGrainSelfCallTyped(t *testing.T) {
	g := newTeller(t, 0)
	var seen []string
	g.Stub(shopv1.AccountKindName, func(id cluster.Identity, msg any) (any, error) {
		seen = append(seen, id.ID)
		return &shopv1.Balance{Amount: units(10 + msg.(*shopv1.DepositRequest).GetAmount().GetUnits())}, nil
	})
	b, err := testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "alice", Amount: units(5)})
	if err != nil || b.GetAmount().GetUnits() != 15 {
		t.Fatalf("Transfer to itself: %v, %v", b, err)
	}
	if len(seen) != 1 || seen[0] != "bob" {
		t.Fatalf("the stub saw %v, want [bob] (the self-call is the grain's)", seen)
	}

	g.Stub(shopv1.AccountKindName, func(cluster.Identity, any) (any, error) {
		return nil, cluster.NewGrainError("frozen", "bob is frozen")
	})
	_, err = testkit.CallGrain[*shopv1.Balance](g, &shopv1.TransferRequest{To: "alice", Amount: units(5)})
	var ge *cluster.GrainError
	if !errors.As(err, &ge) || ge.Code != "frozen" {
		t.Fatalf("Transfer to itself, its Deposit failing: %v, want the GrainError frozen", err)
	}
}

// selfCaller is an untyped grain that calls its own identity as told.
type selfCaller struct {
	sender *actor.PID
	notes  []string
}

type (
	selfFuture  struct{}
	selfRequest struct{ d time.Duration } // the blocking call's deadline

	selfSendThen struct{}
	selfPing     struct{}
	selfNote     struct{ N string }
	selfNotes    struct{}
)

func (s *selfCaller) Receive(ctx actor.Context) {
	c := cluster.Get(ctx.System())
	me, _ := cluster.IdentityOf(ctx)
	switch m := ctx.Message().(type) {
	case selfFuture:
		s.sender = ctx.Sender()
		c.RequestFuture(me, selfPing{}, 0).PipeTo(ctx.Self())
	case selfRequest:
		rctx, cancel := context.WithTimeout(context.Background(), m.d)
		defer cancel()
		v, err := cluster.Request[string](rctx, c, me, selfPing{})
		ctx.Respond(relayed{v, err})
	case selfSendThen:
		// A Send, a future and a Send: they arrive in the order made.
		s.sender = ctx.Sender()
		c.Send(me, selfNote{"a"})
		c.RequestFuture(me, selfNote{"b"}, 0).PipeTo(ctx.Self())
		c.Send(me, selfNote{"c"})
	case selfPing:
		ctx.Respond("pong")
	case selfNote:
		s.notes = append(s.notes, m.N)
		ctx.Respond("noted")
	case selfNotes:
		ctx.Respond(strings.Join(s.notes, ""))
	case string:
		ctx.Send(s.sender, relayed{reply: m})
	case error:
		ctx.Send(s.sender, relayed{err: m})
	}
}

func newSelfCaller(t testing.TB) *testkit.Grain {
	kind := cluster.NewKind("self", actor.PropsFromProducer(func() actor.Actor { return &selfCaller{} }))
	return testkit.NewGrain(t, kind, cluster.NewIdentity("self", "s"))
}

// TestGrainSelfCallUntyped: RequestFuture and Send of a grain to its own
// identity reach the grain on later turns of the same run of the system,
// in the order made; no stub is needed for its own kind.
func TestGrainSelfCallUntyped(t *testing.T) {
	g := newSelfCaller(t)
	if r := testkit.RequestGrain[relayed](g, selfFuture{}); r.reply != "pong" || r.err != nil {
		t.Fatalf("RequestFuture to itself: %+v", r)
	}
	if r := testkit.RequestGrain[relayed](g, selfSendThen{}); r.reply != "noted" || r.err != nil {
		t.Fatalf("RequestFuture to itself between Sends: %+v", r)
	}
	if got := testkit.RequestGrain[string](g, selfNotes{}); got != "abc" {
		t.Fatalf("notes %q, want abc (in the order sent)", got)
	}
}

// TestGrainSelfCallBlockingFails: a blocking Request of a grain to itself
// fails at once with cluster.ErrTimeout, as it does in the cluster at its
// deadline, and the test with an error that names the future variant.
// Before, it went to a stub of its kind, or failed with ErrNoSuchKind.
func TestGrainSelfCallBlockingFails(t *testing.T) {
	rec := newRecorder(t)
	g := newSelfCaller(rec)
	r := testkit.RequestGrain[relayed](g, selfRequest{time.Hour})
	if !errors.Is(r.err, cluster.ErrTimeout) {
		t.Fatalf("blocking Request to itself: %+v, want ErrTimeout", r)
	}
	if errs := rec.Errors(); len(errs) != 1 || !strings.Contains(errs[0], "blocking call (Request, Call, a client's blocking method) to itself") ||
		!strings.Contains(errs[0], "RequestFuture") {
		t.Fatalf("test errors %q", errs)
	}
}

// TestClusterSelfCallsAsNewGrain: in a real cluster the same grain gets
// what NewGrain gives it: its future to itself is answered on a later
// turn, its Sends and future arrive, and its blocking Request to itself
// fails with ErrTimeout, here at its deadline.
func TestClusterSelfCallsAsNewGrain(t *testing.T) {
	kind := cluster.NewKind("self", actor.PropsFromProducer(func() actor.Actor { return &selfCaller{} }))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind))
	ctx := ctxFor(t, 30*time.Second)
	id := cluster.NewIdentity("self", "s")
	r, err := testkit.Request[relayed](ctx, tc.Node(0), id, selfFuture{})
	if err != nil || r.reply != "pong" || r.err != nil {
		t.Fatalf("RequestFuture to itself: %+v, %v", r, err)
	}
	if r, err := testkit.Request[relayed](ctx, tc.Node(0), id, selfSendThen{}); err != nil || r.reply != "noted" {
		t.Fatalf("RequestFuture to itself between Sends: %+v, %v", r, err)
	}
	// All three arrive, in the order made (docs/cluster.md, Order).
	got, err := testkit.Request[string](ctx, tc.Node(0), id, selfNotes{})
	if err != nil || got != "abc" {
		t.Fatalf("notes %q, %v, want abc", got, err)
	}
	r, err = testkit.Request[relayed](ctx, tc.Node(0), id, selfRequest{200 * time.Millisecond})
	if err != nil || !errors.Is(r.err, cluster.ErrTimeout) {
		t.Fatalf("blocking Request to itself: %+v, %v, want ErrTimeout", r, err)
	}
}
