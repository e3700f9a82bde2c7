package cluster

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// The placement core runs in virtual time: every call takes now, nothing
// reads a clock or starts a goroutine.

const (
	coreS = 500 * time.Millisecond // stop budget
	coreW = 3 * time.Second        // wait-out
)

var coreT0 = time.Unix(1_700_000_000, 0)

func coreKind(name string, opts ...KindOption) Kind {
	return NewKind(name, actor.PropsFromFunc(func(actor.Context) {}), opts...)
}

// coreMember is a member hosting the kinds the core tests use.
func coreMember(id string) Member {
	return Member{ID: id, Incarnation: 1, Address: id + ":4000", Kinds: []string{"user", "forever", "zero"}}
}

func heldLease(deadline time.Time) MembershipLease {
	return MembershipLease{Status: MembershipLeaseHeld, Deadline: deadline, Renewed: deadline.Add(-time.Minute)}
}

// newTestCore returns the core of self with kinds user (idle 1 min),
// forever (never idle) and zero (idle 0), and a lease held for an hour.
func newTestCore(self Member) *placementCore {
	c := newPlacementCore(self, []Kind{
		coreKind("user", WithIdleTimeout(time.Minute)),
		coreKind("forever", WithIdleTimeout(-1)),
		coreKind("zero"),
	}, DefaultHashConfig().Strategy(), coreS, coreW)
	c.setLease(heldLease(coreT0.Add(time.Hour)))
	return c
}

func ownerKey(t Topology, id Identity) string {
	o, err := DefaultHashConfig().Strategy().Build(t).Owner(id)
	if err != nil {
		return ""
	}
	return o.Key()
}

// findID returns the first identity "kind/id-N" that satisfies pred.
func findID(t testing.TB, kind string, pred func(Identity) bool) Identity {
	t.Helper()
	for i := range 100000 {
		if id := NewIdentity(kind, fmt.Sprintf("id-%d", i)); pred(id) {
			return id
		}
	}
	t.Fatal("no identity satisfies the predicate")
	return Identity{}
}

// ownedBy returns an identity of kind that m owns in every view of ts.
func ownedBy(t *testing.T, kind string, m Member, ts ...Topology) Identity {
	return findID(t, kind, func(id Identity) bool {
		for _, tp := range ts {
			if ownerKey(tp, id) != m.Key() {
				return false
			}
		}
		return true
	})
}

// moving returns an identity of kind owned by from in a and by to in b.
func moving(t testing.TB, kind string, a, b Topology, from, to Member) Identity {
	return findID(t, kind, func(id Identity) bool { return ownerKey(a, id) == from.Key() && ownerKey(b, id) == to.Key() })
}

// joinView installs c's first view and the acknowledgements of every other
// member, as a member that joined a settled cluster sees it (they have been
// there long enough to vouch for departures).
func joinView(t *testing.T, c *placementCore, tp Topology, now time.Time) {
	t.Helper()
	mustInstall(t, c, tp, now)
	for _, m := range tp.Members {
		c.vouched(m.Key(), tp.Epoch, now)
	}
	require.Empty(t, c.unknown)
}

func mustInstall(t *testing.T, c *placementCore, tp Topology, now time.Time, released ...Member) viewChange {
	t.Helper()
	ch, err := c.installView(tp, released, now)
	require.NoError(t, err)
	return ch
}

// grant activates id under c's view and starts it with a PID.
func grant(t *testing.T, c *placementCore, id Identity, now time.Time) *activation {
	t.Helper()
	a, existing, r := c.activate(id, c.view.Epoch, c.view.Hash, now)
	require.Nil(t, r, "refused: %v", r)
	require.False(t, existing)
	c.started(a, actor.NewPID(c.self.Address, "grain/"+id.String()))
	return a
}

func refusedWith(t *testing.T, r *activationRefusal, want error) {
	t.Helper()
	require.NotNil(t, r, "granted, want %v", want)
	require.ErrorIs(t, r, want)
}

var (
	mA = coreMember("a")
	mB = coreMember("b")
	mC = coreMember("c")
	mD = coreMember("d")
)

// Rule 1 (V1.2, fencing): the lease must be valid until now + S.
func TestPlacementCoreLeaseRule(t *testing.T) {
	tp := NewTopology(1, []Member{mB})
	id := NewIdentity("user", "x")
	now := coreT0
	cases := []struct {
		name  string
		lease *MembershipLease
		ok    bool
	}{
		{"no lease yet", nil, false},
		{"held until now+S", &MembershipLease{Status: MembershipLeaseHeld, Deadline: now.Add(coreS)}, false},
		{"held until now+S+1ns", &MembershipLease{Status: MembershipLeaseHeld, Deadline: now.Add(coreS + 1)}, true},
		{"lost but valid past now+S", &MembershipLease{Status: MembershipLeaseLost, Deadline: now.Add(time.Minute)}, true},
		{"revoked", &MembershipLease{Status: MembershipLeaseRevoked, Deadline: now.Add(time.Minute)}, false},
		{"released", &MembershipLease{Status: MembershipLeaseReleased, Deadline: now.Add(time.Minute)}, false},
		{"expired", &MembershipLease{Status: MembershipLeaseHeld, Deadline: now.Add(-time.Second)}, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newPlacementCore(mB, []Kind{coreKind("user")}, DefaultHashConfig().Strategy(), coreS, coreW)
			if tc.lease != nil {
				c.setLease(*tc.lease)
			}
			mustInstall(t, c, tp, now)
			a, _, r := c.activate(id, tp.Epoch, tp.Hash, now)
			if tc.ok {
				require.Nil(t, r)
				require.NotNil(t, a)
				return
			}
			refusedWith(t, r, errFenced)
			assert.Equal(t, coreS, r.retryAfter)
			assert.Zero(t, c.activeCount())
		})
	}
}

// Rule 1 over time (V1.2, B3.4): tick fences before the lease's guarantee
// runs out, stops everything, and a fenced core refuses even after renewal.
func TestPlacementCoreTickFences(t *testing.T) {
	c := newTestCore(mB)
	deadline := coreT0.Add(10 * time.Second)
	c.setLease(heldLease(deadline))
	tp := NewTopology(1, []Member{mB})
	mustInstall(t, c, tp, coreT0)
	x := grant(t, c, NewIdentity("user", "x"), coreT0)
	y := grant(t, c, NewIdentity("forever", "y"), coreT0)

	pass, fence, stop := c.tick(deadline.Add(-coreS - 1))
	require.False(t, fence, "lease still valid until now+S")
	require.Empty(t, pass)
	require.Empty(t, stop)

	pass, fence, stop = c.tick(deadline.Add(-coreS))
	require.True(t, fence)
	require.Empty(t, pass)
	require.ElementsMatch(t, []*activation{x, y}, stop)
	for _, a := range stop {
		assert.Equal(t, actStopping, a.state)
		assert.Equal(t, stopFence, a.reason)
		assert.Equal(t, deadline.UnixNano(), a.deadline)
	}
	assert.False(t, c.canAck(), "a fenced core does not acknowledge")

	// Renewed or not, a fenced core refuses.
	c.setLease(heldLease(deadline.Add(time.Hour)))
	_, _, r := c.activate(NewIdentity("user", "z"), tp.Epoch, tp.Hash, deadline)
	refusedWith(t, r, errFenced)
	_, fence, stop = c.tick(deadline)
	assert.False(t, fence, "fencing happens once")
	assert.Empty(t, stop)
}

// Rule 2 (V1.2, B2.1): the request's view and the ring must pick this member.
func TestPlacementCoreViewRule(t *testing.T) {
	t1 := NewTopology(1, []Member{mB, mC})
	t2 := NewTopology(2, []Member{mB, mC, mD})
	t3 := NewTopology(3, []Member{mB, mC, mD, mA})
	mine := ownedBy(t, "user", mB, t2)
	theirs := ownedBy(t, "user", mC, t2)

	c := newTestCore(mB)
	_, _, r := c.activate(mine, t2.Epoch, t2.Hash, coreT0)
	refusedWith(t, r, ErrOwnershipChanged) // before any view
	joinView(t, c, t2, coreT0)

	cases := []struct {
		name  string
		id    Identity
		epoch uint64
		hash  uint64
		want  error
	}{
		{"older epoch, other hash", mine, t1.Epoch, t1.Hash, ErrOwnershipChanged},
		{"newer epoch, other hash", mine, t3.Epoch, t3.Hash, ErrOwnershipChanged},
		{"ring picks another member", theirs, t2.Epoch, t2.Hash, ErrOwnershipChanged},
		{"kind not hosted", NewIdentity("nope", "x"), t2.Epoch, t2.Hash, ErrNoSuchKind},
		{"this member's view", mine, t2.Epoch, t2.Hash, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, _, r := c.activate(tc.id, tc.epoch, tc.hash, coreT0)
			if tc.want == nil {
				require.Nil(t, r)
				require.Equal(t, tc.id, a.id)
				return
			}
			refusedWith(t, r, tc.want)
			assert.Nil(t, a)
		})
	}
}

// B2.2: a view with the same hash keeps the owners and only moves the epoch;
// a view with an older epoch is refused (ErrStaleView).
func TestPlacementCoreSameHashAndStaleViews(t *testing.T) {
	c := newTestCore(mB)
	t1 := NewTopology(5, []Member{mB, mC})
	joinView(t, c, t1, coreT0)
	x := grant(t, c, ownedBy(t, "user", mB, t1), coreT0)
	ring := c.ring

	t2 := NewTopology(6, []Member{mC, mB})
	require.Equal(t, t1.Hash, t2.Hash)
	ch := mustInstall(t, c, t2, coreT0.Add(time.Second))
	assert.False(t, ch.changed)
	assert.Empty(t, ch.moved)
	assert.Equal(t, uint64(6), c.view.Epoch)
	assert.Same(t, ring, c.ring, "same hash: the ring is reused")
	assert.Empty(t, c.history, "same hash: no handover barrier")
	a, existing, r := c.activate(x.id, 6, t2.Hash, coreT0.Add(time.Second))
	require.Nil(t, r)
	assert.True(t, existing)
	assert.Same(t, x, a)

	_, err := c.installView(NewTopology(4, []Member{mB}), nil, coreT0.Add(2*time.Second))
	require.ErrorIs(t, err, ErrStaleView)
	assert.Equal(t, uint64(6), c.view.Epoch)
	assert.Equal(t, t1.Hash, c.view.Hash)
}

// Rule 3: the handover barrier. X moves from a (which leaves) to b; c stays
// and owns other identities.
func TestPlacementCoreHandoverBarrier(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mB, mC})
	t2 := NewTopology(2, []Member{mB, mC})
	tv := coreT0.Add(time.Second) // when t2 is installed
	x := moving(t, "user", t1, t2, mA, mB)
	stays := ownedBy(t, "user", mB, t1, t2)

	setup := func(t *testing.T, released ...Member) *placementCore {
		c := newTestCore(mB)
		joinView(t, c, t1, coreT0)
		mustInstall(t, c, t2, tv, released...)
		return c
	}
	busy := func(t *testing.T, c *placementCore, now time.Time) {
		t.Helper()
		_, _, r := c.activate(x, t2.Epoch, t2.Hash, now)
		refusedWith(t, r, errBusy)
		assert.Equal(t, coreS, r.retryAfter)
	}
	granted := func(t *testing.T, c *placementCore, now time.Time) {
		t.Helper()
		_, _, r := c.activate(x, t2.Epoch, t2.Hash, now)
		require.Nil(t, r, "refused: %v", r)
	}

	t.Run("refused until the earlier owner acks the new epoch", func(t *testing.T) {
		c := setup(t)
		busy(t, c, tv)
		c.ack(mA.Key(), 1, tv) // an older epoch does not count
		busy(t, c, tv)
		c.ack(mC.Key(), 2, tv) // another member's ack does not count
		busy(t, c, tv)
		c.ack(mA.Key(), 2, tv)
		granted(t, c, tv)
	})
	t.Run("granted when the earlier owner released", func(t *testing.T) {
		granted(t, setup(t, mA), tv)
	})
	t.Run("granted once the earlier owner is gone for W", func(t *testing.T) {
		c := setup(t)
		busy(t, c, tv.Add(coreW-1))
		granted(t, c, tv.Add(coreW))
	})
	t.Run("identities only this member owned are not blocked", func(t *testing.T) {
		c := setup(t)
		_, _, r := c.activate(stays, t2.Epoch, t2.Hash, tv)
		require.Nil(t, r)
	})
	t.Run("the history clears once no member is pending", func(t *testing.T) {
		c := setup(t)
		require.NotEmpty(t, c.history)
		c.ack(mA.Key(), 2, tv)
		require.NotEmpty(t, c.history, "c has not acked yet")
		c.ack(mC.Key(), 2, tv)
		assert.Empty(t, c.history)
	})
	t.Run("tick clears the history once W passed", func(t *testing.T) {
		c := setup(t)
		c.ack(mC.Key(), 2, tv)
		c.tick(tv.Add(coreW - 1))
		require.NotEmpty(t, c.history)
		c.tick(tv.Add(coreW))
		assert.Empty(t, c.history)
	})
}

// V2.4: a view that moves local activations away stops them (handover) and
// holds the acknowledgement until each has terminated.
func TestPlacementCoreMovedActivations(t *testing.T) {
	t1 := NewTopology(1, []Member{mB, mC})
	t2 := NewTopology(2, []Member{mB, mC, mD})
	x := moving(t, "user", t1, t2, mB, mD)
	y := findID(t, "forever", func(id Identity) bool { return ownerKey(t1, id) == mB.Key() && ownerKey(t2, id) == mD.Key() })
	z := ownedBy(t, "user", mB, t1, t2)

	c := newTestCore(mB)
	joinView(t, c, t1, coreT0)
	ax, ay, az := grant(t, c, x, coreT0), grant(t, c, y, coreT0), grant(t, c, z, coreT0)
	require.True(t, c.canAck())

	tv := coreT0.Add(time.Second)
	ch := mustInstall(t, c, t2, tv)
	require.True(t, ch.changed)
	assert.Equal(t, []Member{mD}, ch.joined)
	assert.Empty(t, ch.left)
	require.ElementsMatch(t, []*activation{ax, ay}, ch.moved)
	for _, a := range ch.moved {
		assert.Equal(t, actStopping, a.state)
		assert.Equal(t, stopHandover, a.reason)
		assert.Equal(t, tv.Add(coreS).UnixNano(), a.deadline)
		assert.Same(t, a, c.acts.get(a.id), "the lease is held (Releasing) until the grain terminates")
	}
	assert.Equal(t, actActive, az.state, "an activation that stays is not touched")

	assert.False(t, c.canAck())
	require.Same(t, ax, c.terminated(ax.pid))
	assert.False(t, c.canAck(), "y has not terminated yet")
	require.Same(t, ay, c.terminated(ay.pid))
	assert.True(t, c.canAck())
	assert.Nil(t, c.terminated(ay.pid), "a PID seen once")
	assert.Equal(t, 1, c.activeCount())
}

// Rule 4 (V1.3, V2.1): the ledger.
func TestPlacementCoreLedgerRule(t *testing.T) {
	tp := NewTopology(1, []Member{mB})
	x := NewIdentity("user", "x")

	t.Run("an active activation is returned", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, tp, coreT0)
		ax := grant(t, c, x, coreT0)
		a, existing, r := c.activate(x, tp.Epoch, tp.Hash, coreT0.Add(time.Second))
		require.Nil(t, r)
		assert.True(t, existing)
		assert.Same(t, ax, a)
		assert.Equal(t, 1, c.activeCount())
	})
	t.Run("a stopping activation is busy until its deadline", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, tp, coreT0)
		ax := grant(t, c, x, coreT0)
		require.Same(t, ax, c.passivate(ax.pid, coreT0))
		assert.Nil(t, c.passivate(ax.pid, coreT0), "already stopping")
		_, _, r := c.activate(x, tp.Epoch, tp.Hash, coreT0.Add(100*time.Millisecond))
		refusedWith(t, r, errBusy)
		assert.Equal(t, coreS-100*time.Millisecond, r.retryAfter)
		_, _, r = c.activate(x, tp.Epoch, tp.Hash, coreT0.Add(time.Second))
		refusedWith(t, r, errBusy)
		assert.Zero(t, r.retryAfter, "past the deadline: retry at once")
	})
	t.Run("a failed activation releases its lease", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, tp, coreT0)
		a1, _, r := c.activate(x, tp.Epoch, tp.Hash, coreT0)
		require.Nil(t, r)
		c.failed(a1)
		assert.Nil(t, c.acts.get(x), "the lease is released")
		assert.Zero(t, c.activeCount())
		a2 := grant(t, c, x, coreT0)
		assert.True(t, a1.token.Less(a2.token))
	})
	t.Run("tokens grow across passivation and views", func(t *testing.T) {
		c := newTestCore(mB)
		joinView(t, c, tp, coreT0)
		var last FencingToken
		now := coreT0
		next := func(t *testing.T) {
			t.Helper()
			a := grant(t, c, x, now)
			require.True(t, last.Less(a.token), "token %s after %s", a.token, last)
			last = a.token
			require.Same(t, a, c.passivate(a.pid, now))
			require.Same(t, a, c.terminated(a.pid))
			now = now.Add(time.Second)
		}
		next(t)
		next(t)
		// A view with a higher epoch where this member still owns x.
		t2 := NewTopology(9, []Member{mB, mC})
		x2 := ownedBy(t, "user", mB, t2)
		x = x2
		next(t)
		mustInstall(t, c, t2, now)
		c.ack(mC.Key(), 9, now)
		next(t)
		assert.Equal(t, uint64(9), last.Epoch)
		next(t)
	})
}

// L4: tick passivates activations idle for their kind's timeout.
func TestPlacementCorePassivation(t *testing.T) {
	tp := NewTopology(1, []Member{mB})
	c := newTestCore(mB)
	joinView(t, c, tp, coreT0)
	idle := grant(t, c, NewIdentity("user", "idle"), coreT0)
	busy := grant(t, c, NewIdentity("user", "busy"), coreT0)
	never := grant(t, c, NewIdentity("forever", "f"), coreT0)
	zero := grant(t, c, NewIdentity("zero", "z"), coreT0)

	pass, fence, _ := c.tick(coreT0.Add(time.Minute - 1))
	require.False(t, fence)
	require.Empty(t, pass)

	busy.touch()
	pass, _, _ = c.tick(coreT0.Add(time.Minute))
	require.Equal(t, []*activation{idle}, pass, "touched since the previous tick: not idle")
	assert.Equal(t, actStopping, idle.state)
	assert.Equal(t, stopPassivate, idle.reason)
	assert.Equal(t, actActive, busy.state)

	pass, _, _ = c.tick(coreT0.Add(2*time.Minute - 1))
	require.Empty(t, pass, "busy was last seen active at t0+1m")
	pass, _, _ = c.tick(coreT0.Add(2 * time.Minute))
	require.Equal(t, []*activation{busy}, pass)

	pass, _, _ = c.tick(coreT0.Add(50 * time.Minute))
	require.Empty(t, pass, "idle <= 0 never passivates")
	assert.Equal(t, actActive, never.state)
	assert.Equal(t, actActive, zero.state)
}

// V2.5, B3.4: shutdown refuses new requests and stops every activation.
func TestPlacementCoreShutdown(t *testing.T) {
	tp := NewTopology(1, []Member{mB})
	c := newTestCore(mB)
	joinView(t, c, tp, coreT0)
	x := grant(t, c, NewIdentity("user", "x"), coreT0)
	y := grant(t, c, NewIdentity("user", "y"), coreT0)
	require.NotNil(t, c.passivate(y.pid, coreT0))

	out := c.beginShutdown(coreT0.Add(time.Second))
	require.ElementsMatch(t, []*activation{x, y}, out)
	assert.Equal(t, actStopping, x.state)
	assert.Equal(t, stopShutdown, x.reason)
	assert.Equal(t, stopRequested, y.reason, "already stopping: unchanged")

	_, _, r := c.activate(NewIdentity("user", "z"), tp.Epoch, tp.Hash, coreT0.Add(time.Second))
	refusedWith(t, r, ErrShuttingDown)
	_, _, r = c.activate(x.id, tp.Epoch, tp.Hash, coreT0.Add(time.Second))
	refusedWith(t, r, ErrShuttingDown)
	c.terminated(x.pid)
	c.terminated(y.pid)
	assert.Zero(t, c.activeCount())
	assert.Zero(t, c.acts.len())
}

// V1.4: block leaves a member out of owner selection; nothing that stays
// with this member moves.
func TestPlacementCoreBlock(t *testing.T) {
	tp := NewTopology(1, []Member{mB, mC, mD})
	c := newTestCore(mB)
	joinView(t, c, tp, coreT0)
	var mine []*activation
	for i := range 20 {
		id := NewIdentity("user", fmt.Sprintf("b-%d", i))
		if ownerKey(tp, id) == mB.Key() {
			mine = append(mine, grant(t, c, id, coreT0))
		}
	}
	require.NotEmpty(t, mine)
	dOwned := ownedBy(t, "user", mD, tp)

	moved := c.block(mD.Key(), coreT0)
	assert.Empty(t, moved)
	for _, a := range mine {
		assert.Equal(t, actActive, a.state)
	}
	o, err := c.ring.Owner(dOwned)
	require.NoError(t, err)
	assert.NotEqual(t, mD.Key(), o.Key(), "a blocked member owns nothing")
	assert.True(t, c.canAck())
	assert.Empty(t, c.block(mD.Key(), coreT0), "blocking twice moves nothing")

	// A view without the blocked member forgets the block.
	t2 := NewTopology(2, []Member{mB, mC})
	mustInstall(t, c, t2, coreT0)
	assert.Empty(t, c.blocked)
}

// errors.Is works through a refusal (the actor maps it to a status).
func TestPlacementCoreRefusalUnwraps(t *testing.T) {
	r := &activationRefusal{err: fmt.Errorf("%w: x", ErrOwnershipChanged)}
	assert.True(t, errors.Is(r, ErrOwnershipChanged))
	assert.Equal(t, "cluster: ownership changed: x", r.Error())
}

// V2.4, rule 3: an activation that is already stopping (passivation, a
// grain's own request, shutdown) when a view moves it away still runs until
// it terminates, so the member must not acknowledge the view before then:
// the acknowledgement lets the new owner activate the identity.
func TestPlacementCoreStoppingActivationMovedAwayHoldsAck(t *testing.T) {
	t1 := NewTopology(1, []Member{mB, mC})
	t2 := NewTopology(2, []Member{mB, mC, mD})
	x := moving(t, "user", t1, t2, mB, mD)
	for _, tc := range []struct {
		name string
		stop func(c *placementCore, a *activation, now time.Time)
	}{
		{"grain passivated itself", func(c *placementCore, a *activation, now time.Time) { c.passivate(a.pid, now) }},
		{"idle passivation", func(c *placementCore, a *activation, now time.Time) { c.tick(now.Add(time.Minute)) }},
		{"shutdown", func(c *placementCore, a *activation, now time.Time) { c.beginShutdown(now) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestCore(mB)
			joinView(t, c, t1, coreT0)
			a := grant(t, c, x, coreT0)
			tc.stop(c, a, coreT0)
			require.Equal(t, actStopping, a.state)
			mustInstall(t, c, t2, coreT0.Add(time.Minute))
			assert.False(t, c.canAck(), "x still runs and d does not own it yet")
			c.terminated(a.pid)
			assert.True(t, c.canAck())
		})
	}
}

// Rule 3 for a member's first view (a new member, or a new incarnation after
// fencing): it does not know who owned an identity before, so every other
// member hosting the kind may still run it until it acknowledged that view,
// released, or was gone for W.
func TestPlacementCoreFirstViewWaitsForEarlierOwners(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mC})     // before b joined
	t2 := NewTopology(2, []Member{mA, mB, mC}) // b's first view
	client := Member{ID: "client", Incarnation: 1, Address: "client:4000"}
	t2c := NewTopology(2, []Member{mA, mB, mC, client})
	x := moving(t, "user", t1, t2c, mA, mB)

	c := newTestCore(mB)
	mustInstall(t, c, t2c, coreT0)
	_, _, r := c.activate(x, t2c.Epoch, t2c.Hash, coreT0)
	refusedWith(t, r, errBusy)
	c.ack(mA.Key(), 2, coreT0)
	_, _, r = c.activate(x, t2c.Epoch, t2c.Hash, coreT0)
	refusedWith(t, r, errBusy) // c hosts user too and has not acked
	c.vouched(mC.Key(), 2, coreT0)
	_, _, r = c.activate(x, t2c.Epoch, t2c.Hash, coreT0)
	require.Nil(t, r, "a member that hosts no kind never blocks: %v", r)
	assert.Empty(t, c.history)

	t.Run("a member that leaves is waited out", func(t *testing.T) {
		c := newTestCore(mB)
		mustInstall(t, c, t2, coreT0)
		c.ack(mC.Key(), 2, coreT0)
		t3 := NewTopology(3, []Member{mB, mC})
		tv := coreT0.Add(time.Second)
		mustInstall(t, c, t3, tv)
		c.ack(mC.Key(), 3, tv)
		y := ownedBy(t, "user", mB, t3)
		_, _, r := c.activate(y, t3.Epoch, t3.Hash, tv.Add(coreW-1))
		refusedWith(t, r, errBusy)
		_, _, r = c.activate(y, t3.Epoch, t3.Hash, tv.Add(coreW))
		require.Nil(t, r)
	})
}

// Rule 3: the wait-out counts from the member's latest departure. A member
// that left, came back under the same key and left again is waited out
// anew.
func TestPlacementCoreWaitOutRestartsOnReturn(t *testing.T) {
	all := NewTopology(1, []Member{mA, mB, mC})
	without := NewTopology(2, []Member{mB, mC})
	x := moving(t, "user", all, without, mA, mB)

	c := newTestCore(mB)
	joinView(t, c, all, coreT0)
	t2 := coreT0.Add(time.Second)
	mustInstall(t, c, without, t2)
	back := NewTopology(3, []Member{mA, mB, mC})
	mustInstall(t, c, back, t2.Add(time.Second))
	c.ack(mA.Key(), 3, t2.Add(time.Second))
	c.ack(mC.Key(), 3, t2.Add(time.Second))

	t4 := t2.Add(coreW + 10*time.Second)
	again := NewTopology(4, []Member{mB, mC})
	mustInstall(t, c, again, t4)
	c.ack(mC.Key(), 4, t4)
	_, _, r := c.activate(x, again.Epoch, again.Hash, t4)
	refusedWith(t, r, errBusy)
	_, _, r = c.activate(x, again.Epoch, again.Hash, t4.Add(coreW-1))
	refusedWith(t, r, errBusy)
	_, _, r = c.activate(x, again.Epoch, again.Hash, t4.Add(coreW))
	require.Nil(t, r)
}

// A member that joins cannot see members that left just before it: it
// grants nothing until it has been in the cluster for W or a member that
// has vouched for the departures (see vouches), except in a provider's first
// view ever (epoch 1), before which nobody existed. (The chaos test found an
// activation started by a restarted member while the grain still ran on a
// member that had left the view before the restart: seed
// 7824330833246463690.)
func TestPlacementCoreFirstViewWaitsOutOrIsVouched(t *testing.T) {
	t.Run("alone after a departure", func(t *testing.T) {
		c := newTestCore(mB)
		tp := NewTopology(7, []Member{mB})
		mustInstall(t, c, tp, coreT0)
		id := ownedBy(t, "user", mB, tp)
		_, _, r := c.activate(id, tp.Epoch, tp.Hash, coreT0.Add(coreW-1))
		refusedWith(t, r, errBusy)
		assert.False(t, c.vouches(coreT0.Add(coreW-1)), "it cannot vouch for departures it never saw")
		grant(t, c, id, coreT0.Add(coreW))
		assert.True(t, c.vouches(coreT0.Add(coreW)))
	})
	t.Run("the first view ever", func(t *testing.T) {
		c := newTestCore(mB)
		tp := NewTopology(1, []Member{mB})
		mustInstall(t, c, tp, coreT0)
		grant(t, c, ownedBy(t, "user", mB, tp), coreT0)
	})
	// A provider whose views are never numbered 1 (Consul's epochs are
	// its index) tells the member that founded the cluster instead
	// (Membership's Founded): a first view within W/2 of the founding is
	// like epoch 1, a later one is not.
	t.Run("the founder's first view", func(t *testing.T) {
		c := newTestCore(mB)
		c.founded = coreT0.Add(-coreW/2 + 1)
		tp := NewTopology(4711, []Member{mB, mC})
		mustInstall(t, c, tp, coreT0)
		id := ownedBy(t, "user", mB, tp)
		c.ack(mC.Key(), tp.Epoch, coreT0) // c is of the first view: it hands over
		grant(t, c, id, coreT0)
		assert.True(t, c.vouches(coreT0), "it vouches for those who joined after it")
	})
	t.Run("the founder's first view too late", func(t *testing.T) {
		c := newTestCore(mB)
		c.founded = coreT0.Add(-coreW / 2)
		tp := NewTopology(4711, []Member{mB})
		mustInstall(t, c, tp, coreT0)
		_, _, r := c.activate(ownedBy(t, "user", mB, tp), tp.Epoch, tp.Hash, coreT0)
		refusedWith(t, r, errBusy)
		assert.False(t, c.vouches(coreT0))
	})
	t.Run("vouched by a member that was there", func(t *testing.T) {
		c := newTestCore(mC)
		tp := NewTopology(9, []Member{mB, mC})
		mustInstall(t, c, tp, coreT0)
		assert.True(t, c.canAck(), "it acknowledges handovers at once")
		assert.False(t, c.vouches(coreT0), "but vouches for nothing yet")
		id := ownedBy(t, "user", mC, tp)
		c.ack(mB.Key(), tp.Epoch, coreT0) // b handed over, but does not vouch
		_, _, r := c.activate(id, tp.Epoch, tp.Hash, coreT0)
		refusedWith(t, r, errBusy)
		c.vouched(mB.Key(), tp.Epoch-1, coreT0) // an older epoch does not vouch
		_, _, r = c.activate(id, tp.Epoch, tp.Hash, coreT0)
		refusedWith(t, r, errBusy)
		c.vouched(mB.Key(), tp.Epoch, coreT0)
		grant(t, c, id, coreT0)
		assert.True(t, c.vouches(coreT0), "vouched for, it vouches in turn")
	})
}

// A member vouches for departures only once it waited out every member
// that left its view without a released marker, so a member that joins
// afterwards never grants what the departed member may still run. (Two
// members that joined together and acknowledged each other at once
// activated grains of a member that had just left and fenced late: chaos
// seed 8988535749850220840.)
func TestPlacementCoreVouchingWaitsOutDepartures(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mB})
	t2 := NewTopology(2, []Member{mB}) // a left (no released marker)
	t3 := NewTopology(3, []Member{mB, mC})

	b := newTestCore(mB)
	joinView(t, b, t1, coreT0)
	left := coreT0.Add(time.Second)
	mustInstall(t, b, t2, left)
	assert.True(t, b.canAck())
	assert.False(t, b.vouches(left.Add(coreW-1)), "a is still waited out")
	assert.True(t, b.vouches(left.Add(coreW)))

	// c joins at epoch 3, after a left: it knows nothing of a.
	c := newTestCore(mC)
	mustInstall(t, c, t3, left)
	x := findID(t, "user", func(id Identity) bool { return ownerKey(t1, id) == mA.Key() && ownerKey(t3, id) == mC.Key() })
	mustInstall(t, b, t3, left)
	c.ack(mB.Key(), t3.Epoch, left) // b's acknowledgement, not vouching yet
	_, _, r := c.activate(x, t3.Epoch, t3.Hash, left)
	refusedWith(t, r, errBusy)
	require.True(t, b.vouches(left.Add(coreW)))
	c.vouched(mB.Key(), t3.Epoch, left.Add(coreW))
	grant(t, c, x, left.Add(coreW))
	// With a released marker there is nothing to wait out.
	d := newTestCore(mB)
	joinView(t, d, t1, coreT0)
	mustInstall(t, d, t2, left, mA)
	assert.True(t, d.vouches(left))
}

// An unblock moves identities to the unblocked member within the view's
// epoch: the core hands over the local activations it moves (the view is
// not acknowledged before they terminate), sends no acknowledgement to a
// member while it is blocked here, and a lease it grants after another
// member's activation of the same epoch ended gets a greater token.
func TestPlacementCoreUnblockHandsOver(t *testing.T) {
	mD2 := mD
	mD2.Incarnation = 2
	t1 := NewTopology(1, []Member{mB, mC, mD})
	t2 := NewTopology(2, []Member{mB, mC})
	t3 := NewTopology(3, []Member{mB, mC, mD2})
	c := newTestCore(mB)
	joinView(t, c, t1, coreT0)
	mustInstall(t, c, t2, coreT0, mD) // d left with a released marker
	c.ack(mC.Key(), 2, coreT0)
	x := findID(t, "user", func(id Identity) bool { return ownerKey(t2, id) == mB.Key() && ownerKey(t3, id) == mD2.Key() })
	a := grant(t, c, x, coreT0)

	// d rejoined as a new incarnation, blocked here (the actor marks it
	// from remote's block list before it installs the view).
	c.blocked[mD2.Key()] = struct{}{}
	ch := mustInstall(t, c, t3, coreT0)
	assert.Empty(t, ch.moved, "d2 is blocked: x stays here")
	assert.False(t, c.acksTo(mD2.Key()), "no acknowledgement to a blocked member")
	assert.True(t, c.acksTo(mC.Key()))
	assert.False(t, c.acksTo(mB.Key()), "none to itself")
	require.True(t, c.canAck())

	moved := c.unblock(mD2.Key(), coreT0)
	require.Equal(t, []*activation{a}, moved, "x moves to d2")
	assert.Equal(t, actStopping, a.state)
	assert.True(t, c.acksTo(mD2.Key()))
	assert.False(t, c.canAck(), "x still runs: no acknowledgement yet")
	require.Same(t, a, c.terminated(a.pid))
	assert.True(t, c.canAck())
	assert.Empty(t, c.unblock(mD2.Key(), coreT0), "unblocking twice moves nothing")

	// d2's activation of an identity it got that way ended with token
	// 3.100: what this core grants in epoch 3 from then on is greater; a
	// token of an earlier epoch changes nothing.
	c.observed(FencingToken{Epoch: 2, Seq: 500})
	c.observed(FencingToken{Epoch: 3, Seq: 100})
	y := grant(t, c, ownedBy(t, "user", mB, t3), coreT0)
	assert.Equal(t, FencingToken{Epoch: 3, Seq: 101}, y.token)
}

// A sequence in another member's broadcast so large that the next token
// would wrap around is not taken: tokens this core grants keep growing.
func TestPlacementCoreObservedSeqBounded(t *testing.T) {
	t1 := NewTopology(1, []Member{mB, mC})
	c := newTestCore(mB)
	joinView(t, c, t1, coreT0)
	c.observed(FencingToken{Epoch: 1, Seq: 7})
	c.observed(FencingToken{Epoch: 1, Seq: math.MaxUint64})
	c.observed(FencingToken{Epoch: 1, Seq: maxObservedSeq + 1})
	x := grant(t, c, ownedBy(t, "user", mB, t1), coreT0)
	assert.Equal(t, FencingToken{Epoch: 1, Seq: 8}, x.token)
}

// A BUSY refusal of rule 3 says what the barrier waits for, and the caller
// gets it as the cause of ErrTimeout when it lasts: "activation busy" alone
// did not tell a joining member's wait-out from an acknowledgement that
// never came (TestTypedGrainFutureError once met it for all its attempts).
func TestPlacementCoreBusyRefusalNamesTheMember(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mC})
	t2 := NewTopology(2, []Member{mA, mB, mC})
	x := moving(t, "user", t1, t2, mA, mB)
	c := newTestCore(mB)
	mustInstall(t, c, t2, coreT0)
	_, _, r := c.activate(x, t2.Epoch, t2.Hash, coreT0)
	refusedWith(t, r, errBusy)
	assert.Contains(t, r.Error(), "waits out members")
	// The caller gets the sentinel's text once (TestActivationRefusalTextNotDoubled).
	assert.Equal(t, 1, strings.Count(ownerRefusal(errBusy, r.err.Error()).Error(), errBusy.Error()))
	c.vouched(mA.Key(), 2, coreT0)
	_, _, r = c.activate(x, t2.Epoch, t2.Hash, coreT0)
	refusedWith(t, r, errBusy)
	assert.Contains(t, r.Error(), "waiting for member "+mC.Key())
	c.ack(mC.Key(), 2, coreT0)
	grant(t, c, x, coreT0)
}

// TestActivationRefusalTextNotDoubled: the owner sends a refusal's whole
// text, its sentinel's included, in ActivationResponse.Error, and the
// caller wraps the sentinel again: ownerRefusal drops the repeated prefix,
// so a caller's ErrTimeout does not read "cluster: activation busy:
// cluster: activation busy: ...". A text without the prefix (an owner
// that sends only the reason) is kept whole.
func TestActivationRefusalTextNotDoubled(t *testing.T) {
	// What refusalResponse sends for a busy refusal of the placement core.
	wire := fmt.Errorf("%w: user/x: waits out members", errBusy).Error()
	got := ownerRefusal(errBusy, wire)
	require.ErrorIs(t, got, errBusy)
	assert.Equal(t, 1, strings.Count(got.Error(), errBusy.Error()), "%v", got)
	assert.Equal(t, wire, got.Error())

	got = ownerRefusal(errFenced, "lease lost")
	require.ErrorIs(t, got, errFenced)
	assert.Equal(t, errFenced.Error()+": lease lost", got.Error())
	assert.Equal(t, ErrNoSuchKind, ownerRefusal(ErrNoSuchKind, ErrNoSuchKind.Error()))
	assert.Equal(t, ErrNoSuchKind, ownerRefusal(ErrNoSuchKind, ""))
}

// A member whose membership ended (fenced) and that joined again as a new
// incarnation starts the barrier afresh, as a member that joins does: the
// barrier of its old incarnation's views held members gone from the new
// view (and the old incarnation itself), which no later view dropped, so
// they were never waited out and every identity they had owned was refused
// as busy for as long as the new incarnation lived. (The chaos test with
// registry outages: after the heal, reads of hundreds of counters failed
// for 30 s, "handover barrier: waiting for member …" naming old
// incarnations of running members.)
func TestPlacementCoreRejoinForgetsTheOldBarrier(t *testing.T) {
	t1 := NewTopology(1, []Member{mA, mB, mC})
	t2 := NewTopology(2, []Member{mA, mB}) // c left: a barrier until a acks
	c := newTestCore(mB)
	joinView(t, c, t1, coreT0)
	mustInstall(t, c, t2, coreT0.Add(time.Second))
	require.NotEmpty(t, c.history, "the barrier of t2 holds")

	// b's lease runs out (a registry outage): it fences, its membership
	// ends and it joins again as b#2; a did the same (a#2).
	deadline := coreT0.Add(2 * time.Second)
	c.setLease(heldLease(deadline))
	_, fence, _ := c.tick(deadline.Add(-coreS))
	require.True(t, fence)
	b2, a2 := mB, mA
	b2.Incarnation, a2.Incarnation = 2, 2
	c.rejoin(b2)
	assert.False(t, c.canAck(), "no view yet")
	rejoined := deadline.Add(time.Second)
	c.setLease(heldLease(rejoined.Add(time.Hour)))
	t5 := NewTopology(5, []Member{a2, b2})
	mustInstall(t, c, t5, rejoined)
	c.vouched(a2.Key(), t5.Epoch, rejoined)

	// Every identity b#2 owns is granted, at once (vouched for), including
	// those b#1 or c owned in the old views (the ring keeps a's).
	for _, owner := range []Member{mB, mC} {
		id := findID(t, "user", func(id Identity) bool {
			return ownerKey(t1, id) == owner.Key() && ownerKey(t5, id) == b2.Key()
		})
		for _, at := range []time.Time{rejoined, rejoined.Add(10 * coreW)} {
			_, _, r := c.activate(id, t5.Epoch, t5.Hash, at)
			require.Nil(t, r, "%s (owned by %s before b rejoined) refused at rejoin+%v: %v", id, owner.Key(), at.Sub(rejoined), r)
		}
	}
	assert.Empty(t, c.history)
	assert.True(t, c.canAck())
}
