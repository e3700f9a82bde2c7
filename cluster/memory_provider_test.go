package cluster

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

const (
	memTTL   = 3 * time.Second
	memRenew = 500 * time.Millisecond
	memFence = 2 * time.Second
)

func newManualRegistry(t *testing.T) (*MemoryRegistry, *scheduler.ManualClock) {
	t.Helper()
	clock := scheduler.NewManualClock(time.Unix(1_000, 0))
	reg, err := NewMemoryRegistry(MemoryConfig{LeaseTTL: memTTL, RenewInterval: memRenew, FencePeriod: memFence, Clock: clock})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return reg, clock
}

func member(id string, inc uint64) Member {
	return Member{ID: id, Incarnation: inc, Address: id + ":4000", Kinds: []string{"user"}, Weight: 1}
}

func join(t *testing.T, reg *MemoryRegistry, m Member) Membership {
	t.Helper()
	ms, err := reg.Join(context.Background(), m)
	require.NoError(t, err)
	return ms
}

// latest takes the pending snapshot (the registry delivers synchronously).
func latest(t *testing.T, ms Membership) Topology {
	t.Helper()
	select {
	case top, ok := <-ms.Snapshots():
		require.True(t, ok, "snapshot channel closed")
		return top
	default:
		require.FailNow(t, "no snapshot pending")
		return Topology{}
	}
}

func noSnapshot(t *testing.T, ms Membership) {
	t.Helper()
	select {
	case top, ok := <-ms.Snapshots():
		if ok {
			require.FailNowf(t, "unexpected snapshot", "epoch %d members %v", top.Epoch, keys(top))
		}
	default:
	}
}

// drainEvents returns the events emitted so far.
func drainEvents(ms interface{ Events() <-chan MembershipEvent }) []MembershipEvent {
	var out []MembershipEvent
	for {
		select {
		case ev, ok := <-ms.Events():
			if !ok {
				return out
			}
			out = append(out, ev)
		default:
			return out
		}
	}
}

func kinds(evs []MembershipEvent) []MembershipEventKind {
	var out []MembershipEventKind
	for _, ev := range evs {
		out = append(out, ev.Kind)
	}
	return out
}

func keys(top Topology) []string {
	out := make([]string, len(top.Members))
	for i, m := range top.Members {
		out[i] = m.Key()
	}
	return out
}

func TestMemoryConfigValidate(t *testing.T) {
	ok := DefaultMemoryConfig()
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		mod  func(*MemoryConfig)
		want string
	}{
		{"zero TTL", func(c *MemoryConfig) { c.LeaseTTL = 0 }, "LeaseTTL"},
		{"zero renew", func(c *MemoryConfig) { c.RenewInterval = 0 }, "RenewInterval"},
		{"zero fence", func(c *MemoryConfig) { c.FencePeriod = 0 }, "FencePeriod"},
		{"renew not below fence", func(c *MemoryConfig) { c.RenewInterval = c.FencePeriod }, "shorter than FencePeriod"},
		{"fence not below TTL", func(c *MemoryConfig) { c.FencePeriod = c.LeaseTTL }, "shorter than LeaseTTL"},
		{"negative buffer", func(c *MemoryConfig) { c.EventBuffer = -1 }, "EventBuffer"},
		// Join allocates it: math.MaxInt panicked there (makechan).
		{"huge buffer", func(c *MemoryConfig) { c.EventBuffer = math.MaxInt }, "EventBuffer"},
		{"negative retention", func(c *MemoryConfig) { c.ReleasedRetention = -1 }, "ReleasedRetention"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultMemoryConfig()
			tc.mod(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidProviderConfig)
			assert.Contains(t, err.Error(), tc.want)
			_, err = NewMemoryRegistry(c)
			require.ErrorIs(t, err, ErrInvalidProviderConfig)
		})
	}
}

func TestMemoryJoinRejectsBadMembers(t *testing.T) {
	reg, _ := newManualRegistry(t)
	_, err := reg.Join(context.Background(), Member{Incarnation: 1})
	require.ErrorIs(t, err, ErrInvalidMember)

	a := join(t, reg, member("a", 1))
	_, err = reg.Join(context.Background(), member("a", 1))
	require.ErrorIs(t, err, ErrIncarnationReused)
	require.NoError(t, a.Leave(context.Background()))
	_, err = reg.Join(context.Background(), member("a", 1))
	require.ErrorIs(t, err, ErrIncarnationReused, "an old incarnation is never resumed, even after it left")
	join(t, reg, member("a", 2)) // a new incarnation of the same node is fine

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = reg.Join(ctx, member("b", 1))
	require.ErrorIs(t, err, context.Canceled)
}

func TestMemoryMembersSeeEachOtherWithGrowingEpochs(t *testing.T) {
	reg, clock := newManualRegistry(t)
	var ms []Membership
	var lastEpoch uint64
	for i, id := range []string{"a", "b", "c"} {
		m := join(t, reg, member(id, 7))
		ms = append(ms, m)
		lease := m.Lease()
		assert.Equal(t, MembershipLeaseHeld, lease.Status)
		assert.Equal(t, clock.Now().Add(memFence), lease.Deadline)
		assert.True(t, lease.Valid(clock.Now()))
		for _, other := range ms {
			top := latest(t, other)
			assert.Len(t, top.Members, i+1)
			assert.Greater(t, top.Epoch, lastEpoch)
		}
		lastEpoch = uint64(i + 1)
	}
	want := reg.Topology()
	for _, m := range ms {
		got, ok := m.Latest()
		require.True(t, ok)
		assert.Equal(t, want, got)
		assert.Equal(t, []string{"a#7", "b#7", "c#7"}, keys(got))
	}

	// Renewals keep every lease held and move the deadline with the clock;
	// they change nothing in the view.
	clock.Advance(10 * memTTL)
	for _, m := range ms {
		assert.Equal(t, MembershipLeaseHeld, m.Lease().Status)
		assert.True(t, m.Lease().Deadline.After(clock.Now().Add(memFence-memRenew)))
		noSnapshot(t, m)
		assert.Empty(t, drainEvents(m))
	}
	assert.Equal(t, want, reg.Topology())
}

func TestMemorySlowConsumerSeesLatestOnly(t *testing.T) {
	reg, _ := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	for _, id := range []string{"b", "c", "d", "e"} {
		join(t, reg, member(id, 1))
	}
	top := latest(t, a)
	assert.Equal(t, uint64(5), top.Epoch, "the unread snapshots were replaced by the newest")
	assert.Len(t, top.Members, 5)
	noSnapshot(t, a)

	// A received snapshot belongs to the receiver.
	top.Members[0].Kinds[0] = "mutated"
	got, _ := a.Latest()
	assert.Equal(t, "user", got.Members[0].Kinds[0])
}

func TestMemoryLeaveRemovesAtOnceWithReleasedMarker(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	before := latest(t, a)
	latest(t, b)

	require.NoError(t, b.Leave(context.Background()))

	after := latest(t, a)
	assert.Greater(t, after.Epoch, before.Epoch)
	joined, left := Diff(before, after)
	assert.Empty(t, joined)
	require.Len(t, left, 1)
	assert.Equal(t, "b#1", left[0].Key())
	assert.Equal(t, []Member{member("b", 1)}, a.Released())
	evs := drainEvents(a)
	require.Equal(t, []MembershipEventKind{MembershipEventMemberReleased}, kinds(evs))
	assert.Equal(t, "b#1", evs[0].Member.Key())

	// The leaver's lease is released at once and its stream ended.
	lease := b.Lease()
	assert.Equal(t, MembershipLeaseReleased, lease.Status)
	assert.False(t, lease.Valid(clock.Now()))
	assert.False(t, lease.Deadline.After(clock.Now()))
	assert.Equal(t, ViewEnded, b.ViewState().Status)
	_, open := <-b.Snapshots()
	assert.False(t, open)
	assert.Equal(t, []MembershipEventKind{MembershipEventEnded}, kinds(drainEvents(b)))
	require.ErrorIs(t, b.Leave(context.Background()), ErrMembershipEnded)
	require.NoError(t, b.Stop(context.Background()))

	// b's renewals stopped: time passing changes nothing for a.
	clock.Advance(2 * memTTL)
	noSnapshot(t, a)
}

func TestMemoryVanishedMemberRemovedWhenLeaseExpires(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	latest(t, a)
	stoppedAt := clock.Now()
	bDeadline := b.Lease().Deadline

	require.NoError(t, b.Stop(context.Background()))
	assert.Equal(t, MembershipLeaseLost, b.Lease().Status)
	assert.Equal(t, bDeadline, b.Lease().Deadline, "a stopped member keeps its deadline")

	clock.Advance(memTTL - time.Millisecond)
	noSnapshot(t, a)
	assert.Len(t, reg.Topology().Members, 2, "no removal before the TTL")

	clock.Advance(time.Millisecond)
	top := latest(t, a)
	assert.Equal(t, []string{"a#1"}, keys(top))
	assert.Equal(t, stoppedAt.Add(memTTL), clock.Now())
	assert.True(t, clock.Now().After(bDeadline), "others see it gone only after its own deadline")
	assert.Empty(t, a.Released(), "a vanished member left no released marker")
}

func TestMemoryPartitionedMemberLosesLeaseBeforeItsDeadline(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	latest(t, a)
	latest(t, b)

	reg.Partition("b#1")
	deadline := b.Lease().Deadline
	var lostAt time.Time
	var goneAt time.Time
	for step := 0; step < int(2*memTTL/memRenew); step++ {
		clock.Advance(memRenew)
		lease := b.Lease()
		assert.False(t, lease.Deadline.After(deadline), "a deadline beyond the last successful renewal's")
		for _, ev := range drainEvents(b) {
			if ev.Kind == MembershipEventLeaseLost && lostAt.IsZero() {
				lostAt = ev.At
				require.ErrorIs(t, ev.Err, ErrPartitioned)
				assert.Equal(t, deadline, ev.Lease.Deadline)
			}
		}
		select {
		case top := <-a.Snapshots():
			if goneAt.IsZero() && len(top.Members) == 1 {
				goneAt = clock.Now()
			}
		default:
		}
	}
	require.False(t, lostAt.IsZero(), "no lease-lost event")
	assert.True(t, lostAt.Before(deadline), "lease lost reported at %v, deadline %v", lostAt, deadline)
	require.False(t, goneAt.IsZero(), "the partitioned member never expired")
	assert.True(t, goneAt.After(deadline), "others saw it gone at %v, before its deadline %v", goneAt, deadline)
	assert.Equal(t, ViewStale, b.ViewState().Status)
	assert.False(t, b.Lease().Valid(clock.Now()))

	// Healing after the registry dropped it revokes the lease for good.
	reg.Heal("b#1")
	clock.Advance(memRenew)
	evs := drainEvents(b)
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseRevoked, MembershipEventViewRestored}, kinds(evs))
	require.ErrorIs(t, b.Lease().Err, ErrLeaseRevoked)
	assert.Equal(t, MembershipLeaseRevoked, b.Lease().Status)
	assert.Equal(t, []string{"a#1"}, keys(latest(t, b)))
	clock.Advance(memRenew)
	assert.Equal(t, MembershipLeaseRevoked, b.Lease().Status, "a revoked lease never comes back")
	require.NoError(t, b.Leave(context.Background()))
}

func TestMemoryPartitionHealedInTimeRestoresLease(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	latest(t, a)
	latest(t, b)

	reg.Partition("b#1")
	clock.Advance(memRenew)
	c := join(t, reg, member("c", 1)) // b misses this view (B2.4: it keeps the last one)
	latest(t, c)
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseLost, MembershipEventViewStale}, kinds(drainEvents(b)))
	noSnapshot(t, b)
	last, _ := b.Latest()
	assert.Len(t, last.Members, 2)
	require.ErrorIs(t, b.Leave(context.Background()), ErrPartitioned, "a partitioned member cannot leave")
	assert.Equal(t, ViewEnded, b.ViewState().Status)

	d := join(t, reg, member("d", 1))
	reg.Partition("d#1")
	clock.Advance(memRenew)
	reg.Heal("d#1")
	frozen := d.Lease().Deadline
	clock.Advance(memRenew)
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseLost, MembershipEventViewStale, MembershipEventLeaseRestored, MembershipEventViewRestored},
		kinds(drainEvents(d)))
	assert.Equal(t, MembershipLeaseHeld, d.Lease().Status)
	assert.True(t, d.Lease().Deadline.After(frozen))
	top := latest(t, d)
	assert.Contains(t, keys(top), "d#1")
}

func TestMemoryCloseEndsEverything(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	reg.Close()
	reg.Close()
	_, open := <-a.Snapshots()
	assert.True(t, open, "the pending snapshot is still delivered")
	_, open = <-a.Snapshots()
	assert.False(t, open)
	_, err := reg.Join(context.Background(), member("b", 1))
	require.ErrorIs(t, err, ErrRegistryClosed)
	assert.Equal(t, 0, clock.Pending(), "timers left behind")
	require.ErrorIs(t, a.Leave(context.Background()), ErrMembershipEnded)
}

// TestMemorySystemClock runs the registry on real timers under the race
// detector: a member that stops without leaving disappears from the other's
// view once its lease expires.
func TestMemorySystemClock(t *testing.T) {
	reg, err := NewMemoryRegistry(MemoryConfig{LeaseTTL: 300 * time.Millisecond, RenewInterval: 20 * time.Millisecond, FencePeriod: 200 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	require.NoError(t, b.Stop(context.Background()))
	timeout := time.After(10 * time.Second)
	for {
		select {
		case top := <-a.Snapshots():
			if len(top.Members) == 1 {
				assert.Equal(t, "a", top.Members[0].ID)
				assert.True(t, a.Lease().Valid(time.Now()))
				require.NoError(t, a.Leave(context.Background()))
				return
			}
		case <-timeout:
			require.FailNow(t, "b never expired")
		}
	}
}

func TestMemoryErrorsAreDistinct(t *testing.T) {
	all := []error{ErrMembershipEnded, ErrIncarnationReused, ErrInvalidMember, ErrInvalidProviderConfig,
		ErrLeaseRevoked, ErrRenewalFailed, ErrEpochRegressed, ErrPartitioned, ErrRegistryClosed}
	for i, a := range all {
		assert.Contains(t, a.Error(), "cluster: ")
		for j, b := range all {
			assert.Equal(t, i == j, errors.Is(a, b))
		}
	}
}

// A member partitioned only between two of its renewals (cut and healed in
// that gap, as a short pause is) makes no failed renewal, so its view never
// turns stale; the views it missed meanwhile must still reach it at its next
// renewal. Before, it kept the old view until the next change in the
// registry (TestChaos: a member never saw a member that joined during its
// pause, and the cluster did not converge).
func TestMemoryViewMissedBetweenRenewalsDeliveredAtNext(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	latest(t, a)

	reg.Partition("a#1")
	b := join(t, reg, member("b", 1)) // a misses this view
	latest(t, b)
	reg.Heal("a#1")
	noSnapshot(t, a)
	assert.Equal(t, ViewLive, a.ViewState().Status, "no renewal failed")

	clock.Advance(memRenew)
	top := latest(t, a)
	assert.Equal(t, []string{"a#1", "b#1"}, keys(top))
	noSnapshot(t, a)
	clock.Advance(memRenew)
	noSnapshot(t, a) // delivered once
}
