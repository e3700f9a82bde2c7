package testkit

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Activation is one activation the Observer saw: where it ran, under which
// token, from its ActivationStarted to its ActivationTerminated (End is zero
// while it runs).
type Activation struct {
	Identity   cluster.Identity
	Member     string // member key (id#incarnation)
	Token      cluster.FencingToken
	PID        *actor.PID
	Start, End time.Time
}

func (a Activation) running() bool { return a.End.IsZero() }

func (a Activation) String() string {
	end := "running"
	if !a.running() {
		end = a.End.Format("15:04:05.000000")
	}
	return fmt.Sprintf("%s on %s token %v [%s, %s]", a.Identity, a.Member, a.Token, a.Start.Format("15:04:05.000000"), end)
}

// Ack is one request a grain acknowledged (Observer.Ack).
type Ack struct {
	Identity  cluster.Identity
	RequestID string
	Member    string
	Token     cluster.FencingToken
	At        time.Time
}

// Overlap is two activations of one identity that ran at the same time.
type Overlap struct {
	A, B     Activation
	From, To time.Time // the common interval (To zero: both still run)
}

func (o Overlap) String() string {
	to := "now"
	if !o.To.IsZero() {
		to = o.To.Format("15:04:05.000000")
	}
	return fmt.Sprintf("%s ran on %s (token %v) and on %s (token %v) at once, from %s to %s (%v)",
		o.A.Identity, o.A.Member, o.A.Token, o.B.Member, o.B.Token, o.From.Format("15:04:05.000000"), to, o.To.Sub(o.From))
}

// Observer records, independently of the grains and of the placement logic
// it checks, every activation start and stop that the members' placement
// actors publish (cluster.ActivationStarted and ActivationTerminated on
// each member's EventStream, as published by the hosting member) with the
// time the member stamped, mapped to the cluster's clock (a member whose
// clock runs at another rate, TestCluster.SetClockRate, stamps its own
// time: compared as they are, two members' stamps would order events
// wrongly by the offset between their clocks), and every request a grain
// acknowledges (Ack). TestCluster.Observer returns the one that watches
// every member, restarted and added ones included. Safe for concurrent use.
type Observer struct {
	now func() time.Time

	mu   sync.Mutex
	acts []*Activation
	open map[string]*Activation // by PID and token
	acks []Ack
	subs []*actor.Subscription
}

func newObserver(now func() time.Time) *Observer {
	return &Observer{now: now, open: map[string]*Activation{}}
}

func openKey(p *actor.PID, t cluster.FencingToken) string {
	return p.Address + "/" + p.ID + "@" + t.String()
}

// watch subscribes to sys's events; only what sys itself hosts is recorded
// (the broadcast of another member's termination is recorded there). One
// subscription takes both event types, so they are seen in the order the
// placement actor published them (an activation's end before its
// successor's start on the same member), and activations are keyed by PID
// and token (successive activations of an identity share a PID). toTrue
// maps sys's times to the cluster's clock.
func (o *Observer) watch(sys *actor.System, toTrue func(time.Time) time.Time) {
	s1 := sys.EventStream().SubscribeWithPredicate(func(e any) {
		switch ev := e.(type) {
		case *cluster.ActivationStarted:
			o.mu.Lock()
			defer o.mu.Unlock()
			a := &Activation{Identity: ev.Identity, Member: ev.Member, Token: ev.Token, PID: ev.PID, Start: toTrue(ev.At)}
			o.acts = append(o.acts, a)
			o.open[openKey(ev.PID, ev.Token)] = a
		case *cluster.ActivationTerminated:
			if ev.PID == nil || ev.PID.Address != sys.Address() {
				return
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			k := openKey(ev.PID, ev.Token)
			if a := o.open[k]; a != nil {
				a.End = toTrue(ev.At)
				delete(o.open, k)
			}
		}
	}, func(e any) bool {
		switch e.(type) {
		case *cluster.ActivationStarted, *cluster.ActivationTerminated:
			return true
		}
		return false
	})
	o.mu.Lock()
	o.subs = append(o.subs, s1)
	o.mu.Unlock()
}

// memberDown ends, at at, every activation still open on the member at
// addr: its process is gone, so are its grains, whether or not their
// ActivationTerminated was delivered before its EventStream closed.
func (o *Observer) memberDown(addr string, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	for k, a := range o.open {
		if a.PID.Address == addr {
			a.End = at
			delete(o.open, k)
		}
	}
}

// Dropped returns how many events the observer's subscriptions dropped
// (a full buffer); the assertions fail when it is not zero, since a lost
// event makes the record incomplete.
func (o *Observer) Dropped() uint64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	var n uint64
	for _, s := range o.subs {
		n += s.Dropped()
	}
	return n
}

// Ack records that the grain whose Context ctx is acknowledged the request
// requestID (call it where the grain replies to a request it applied).
func (o *Observer) Ack(ctx actor.Context, requestID string) {
	id, _ := cluster.IdentityOf(ctx)
	tok, _ := cluster.FencingTokenOf(ctx)
	ack := Ack{Identity: id, RequestID: requestID, Member: ctx.Self().Address, Token: tok, At: o.now()}
	o.mu.Lock()
	o.acks = append(o.acks, ack)
	o.mu.Unlock()
}

// Activations returns every activation seen, in the order started.
func (o *Observer) Activations() []Activation {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Activation, len(o.acts))
	for i, a := range o.acts {
		out[i] = *a
	}
	return out
}

// Acks returns every acknowledgement recorded.
func (o *Observer) Acks() []Ack {
	o.mu.Lock()
	defer o.mu.Unlock()
	return slices.Clone(o.acks)
}

func (o *Observer) byIdentity() map[cluster.Identity][]Activation {
	m := map[cluster.Identity][]Activation{}
	for _, a := range o.Activations() {
		m[a.Identity] = append(m[a.Identity], a)
	}
	for _, as := range m {
		slices.SortStableFunc(as, func(x, y Activation) int { return x.Start.Compare(y.Start) })
	}
	return m
}

// Overlaps returns every pair of activations of one identity whose
// intervals intersect.
func (o *Observer) Overlaps() []Overlap {
	var out []Overlap
	for _, as := range o.byIdentity() {
		for i := range as {
			for j := i + 1; j < len(as); j++ {
				a, b := as[i], as[j]
				// b starts at or after a; they overlap when b starts
				// before a ended.
				if !a.running() && !b.Start.Before(a.End) {
					continue
				}
				to := a.End
				if !b.running() && (to.IsZero() || b.End.Before(to)) {
					to = b.End
				}
				out = append(out, Overlap{A: a, B: b, From: b.Start, To: to})
			}
		}
	}
	return out
}

// AssertNoOverlap fails t for every identity that was active on two
// members (or twice on one) at once, naming the identity, both members,
// both tokens and the common interval.
func (o *Observer) AssertNoOverlap(t testing.TB) {
	t.Helper()
	if n := o.Dropped(); n > 0 {
		t.Errorf("testkit: the observer dropped %d events; its record is incomplete", n)
	}
	for _, ov := range o.Overlaps() {
		t.Errorf("testkit: overlapping activations: %s", ov)
	}
}

// TokenRegression is an activation whose token is not greater than the
// token of the activation of the same identity that started before it.
type TokenRegression struct{ Before, After Activation }

// TokenRegressions returns every activation whose fencing token did not
// grow over its identity's previous activation.
func (o *Observer) TokenRegressions() []TokenRegression {
	var out []TokenRegression
	for _, as := range o.byIdentity() {
		for i := 1; i < len(as); i++ {
			if !as[i-1].Token.Less(as[i].Token) {
				out = append(out, TokenRegression{Before: as[i-1], After: as[i]})
			}
		}
	}
	return out
}

// AssertTokensMonotonic fails t for every activation whose fencing token is
// not greater than that of the identity's previous activation.
func (o *Observer) AssertTokensMonotonic(t testing.TB) {
	t.Helper()
	for _, r := range o.TokenRegressions() {
		t.Errorf("testkit: fencing token did not grow: %s, then %s", r.Before, r.After)
	}
}

// StaleWrites returns the writes of writes (FencedStore.Writes) that an
// activation made after a successor with a greater token had started: the
// writes a store without fencing would have let a stale activation make.
func (o *Observer) StaleWrites(writes []FencedWrite) []FencedWrite {
	by := o.byIdentity()
	var out []FencedWrite
	for _, w := range writes {
		for _, a := range by[w.Identity] {
			if w.Token.Less(a.Token) && a.Start.Before(w.At) {
				out = append(out, w)
				break
			}
		}
	}
	return out
}

// AssertNoStaleWrites fails t for every accepted write of a superseded
// activation (see StaleWrites).
func (o *Observer) AssertNoStaleWrites(t testing.TB, writes []FencedWrite) {
	t.Helper()
	for _, w := range o.StaleWrites(writes) {
		t.Errorf("testkit: stale write accepted: %s token %v at %s", w.Identity, w.Token, w.At.Format("15:04:05.000000"))
	}
}

// Report summarises what the observer saw.
func (o *Observer) Report() string {
	var b strings.Builder
	acts := o.Activations()
	running := 0
	for _, a := range acts {
		if a.running() {
			running++
		}
	}
	fmt.Fprintf(&b, "activations %d (running %d), acks %d, overlaps %d, token regressions %d, dropped events %d",
		len(acts), running, len(o.Acks()), len(o.Overlaps()), len(o.TokenRegressions()), o.Dropped())
	return b.String()
}
