package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type fakeNow struct{ t time.Time }

func (f *fakeNow) now() time.Time { return f.t }

func newFeed(t *testing.T, buffer int) (*MembershipFeed, *fakeNow) {
	t.Helper()
	clk := &fakeNow{t: time.Unix(100, 0)}
	f, err := NewMembershipFeed(MembershipFeedConfig{Self: member("self", 1), Fence: time.Second, Now: clk.now, EventBuffer: buffer})
	require.NoError(t, err)
	return f, clk
}

func TestFeedConfigErrors(t *testing.T) {
	_, err := NewMembershipFeed(MembershipFeedConfig{Self: member("a", 1)})
	require.ErrorIs(t, err, ErrInvalidProviderConfig)
	_, err = NewMembershipFeed(MembershipFeedConfig{Fence: time.Second})
	require.ErrorIs(t, err, ErrInvalidMember)
}

func TestFeedLeaseNotValidBeforeFirstRenewal(t *testing.T) {
	f, clk := newFeed(t, 0)
	assert.False(t, f.Lease().Valid(clk.t))
	f.RenewalFailed(errors.New("boom"))
	assert.Empty(t, drainEvents(f), "no lease-lost event for a lease never held")
	f.Renewed(clk.t)
	assert.Empty(t, drainEvents(f), "the first grant is no restoration")
	assert.Equal(t, clk.t.Add(time.Second), f.Lease().Deadline)
}

func TestFeedDeadlineOnlyFromSuccessfulRenewals(t *testing.T) {
	f, clk := newFeed(t, 0)
	f.Renewed(clk.t)
	d0 := f.Lease().Deadline

	clk.t = clk.t.Add(300 * time.Millisecond)
	f.RenewalFailed(errors.New("timeout"))
	f.RenewalFailed(errors.New("timeout"))
	lease := f.Lease()
	assert.Equal(t, MembershipLeaseLost, lease.Status)
	assert.Equal(t, d0, lease.Deadline)
	assert.Equal(t, 2, lease.Failures)
	assert.True(t, lease.Valid(clk.t), "a lost lease still protects until its deadline")
	assert.Equal(t, 700*time.Millisecond, lease.Remaining(clk.t))
	assert.False(t, lease.Valid(d0))
	evs := drainEvents(f)
	require.Equal(t, []MembershipEventKind{MembershipEventLeaseLost}, kinds(evs), "one event per transition")
	assert.Equal(t, clk.t, evs[0].At)

	// An old send time cannot pull the deadline back.
	f.Renewed(clk.t.Add(-time.Hour))
	assert.Equal(t, d0, f.Lease().Deadline)
	f.Renewed(clk.t)
	assert.Equal(t, clk.t.Add(time.Second), f.Lease().Deadline)
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseRestored}, kinds(drainEvents(f)))

	f.Revoke(nil)
	assert.Equal(t, clk.t, f.Lease().Deadline, "revocation cuts the deadline to now")
	require.ErrorIs(t, f.Lease().Err, ErrLeaseRevoked)
	f.Renewed(clk.t)
	f.RenewalFailed(nil)
	assert.Equal(t, MembershipLeaseRevoked, f.Lease().Status, "revocation is terminal")
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseRevoked}, kinds(drainEvents(f)))
}

func TestFeedPublish(t *testing.T) {
	self := member("self", 1)
	other := member("other", 1)
	for _, tc := range []struct {
		name      string
		views     []Topology
		wantErr   error
		wantEpoch uint64
		wantKinds []MembershipEventKind
		revoked   bool
	}{
		{name: "growing epochs", views: []Topology{NewTopology(5, []Member{self}), NewTopology(9, []Member{self, other})}, wantEpoch: 9},
		{name: "duplicate is idempotent", views: []Topology{NewTopology(5, []Member{self}), NewTopology(5, []Member{self})}, wantEpoch: 5},
		{name: "lower epoch", views: []Topology{NewTopology(5, []Member{self}), NewTopology(4, []Member{self})},
			wantErr: ErrEpochRegressed, wantEpoch: 5, wantKinds: []MembershipEventKind{MembershipEventEpochRegressed}},
		{name: "same epoch other members", views: []Topology{NewTopology(5, []Member{self}), NewTopology(5, []Member{self, other})},
			wantErr: ErrEpochRegressed, wantEpoch: 5, wantKinds: []MembershipEventKind{MembershipEventEpochRegressed}},
		{name: "self absent before join epoch", views: []Topology{NewTopology(2, []Member{other})}, wantEpoch: 2},
		{name: "self absent at join epoch", views: []Topology{NewTopology(3, []Member{other})}, wantEpoch: 3,
			wantKinds: []MembershipEventKind{MembershipEventLeaseRevoked}, revoked: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, clk := newFeed(t, 0)
			f.SetJoinEpoch(3)
			f.Renewed(clk.t)
			var err error
			for _, v := range tc.views {
				err = f.Publish(v, nil)
			}
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
			} else {
				require.NoError(t, err)
			}
			got := <-f.Snapshots()
			assert.Equal(t, tc.wantEpoch, got.Epoch)
			select {
			case extra := <-f.Snapshots():
				assert.Failf(t, "second snapshot", "epoch %d", extra.Epoch)
			default:
			}
			assert.Equal(t, tc.wantKinds, kinds(drainEvents(f)))
			assert.Equal(t, tc.revoked, f.Revoked())
		})
	}
}

func TestFeedViewHealthAndReleased(t *testing.T) {
	f, clk := newFeed(t, 0)
	f.Renewed(clk.t)
	require.NoError(t, f.Publish(NewTopology(1, []Member{member("self", 1)}), nil))
	f.ViewFailed(errors.New("connection refused"))
	f.ViewFailed(errors.New("connection refused"))
	assert.Equal(t, ViewStale, f.ViewState().Status)
	// The same view again restores health without a new snapshot.
	require.NoError(t, f.Publish(NewTopology(1, []Member{member("self", 1)}), []Member{member("gone", 3)}))
	assert.Equal(t, ViewLive, f.ViewState().Status)
	assert.Equal(t, []MembershipEventKind{MembershipEventViewStale, MembershipEventViewRestored, MembershipEventMemberReleased}, kinds(drainEvents(f)))
	require.NoError(t, f.Publish(NewTopology(2, []Member{member("self", 1)}), []Member{member("gone", 3)}))
	assert.Empty(t, drainEvents(f), "a released marker is reported once")
	assert.Equal(t, []Member{member("gone", 3)}, f.Released())
	f.EpochRegressed(9, 2)
	evs := drainEvents(f)
	require.Len(t, evs, 1)
	assert.Equal(t, "epoch-regressed 9->2", evs[0].String())
}

func TestFeedDropsEventsOnFullBuffer(t *testing.T) {
	f, clk := newFeed(t, 2)
	f.Renewed(clk.t)
	for range 3 {
		f.RenewalFailed(errors.New("x"))
		f.Renewed(clk.t)
	}
	assert.Len(t, drainEvents(f), 2)
	assert.Equal(t, uint64(4), f.DroppedEvents())
}

func TestFeedEnd(t *testing.T) {
	f, clk := newFeed(t, 0)
	f.Renewed(clk.t)
	require.NoError(t, f.Publish(NewTopology(1, []Member{member("self", 1)}), nil))
	f.End()
	f.End()
	assert.True(t, f.Ended())
	require.ErrorIs(t, f.Publish(NewTopology(2, nil), nil), ErrMembershipEnded)
	top, ok := <-f.Snapshots()
	assert.True(t, ok)
	assert.Equal(t, uint64(1), top.Epoch)
	_, ok = <-f.Snapshots()
	assert.False(t, ok)
	assert.Equal(t, []MembershipEventKind{MembershipEventLeaseLost, MembershipEventEnded}, kinds(drainEvents(f)))
	assert.Equal(t, MembershipLeaseLost, f.Lease().Status)
	require.ErrorIs(t, f.Lease().Err, ErrMembershipEnded)
	assert.Equal(t, clk.t.Add(time.Second), f.Lease().Deadline, "a stopped membership keeps its deadline")
	latest, ok := f.Latest()
	assert.True(t, ok)
	assert.Equal(t, uint64(1), latest.Epoch)
	// Producer calls after End are no-ops.
	f.Renewed(clk.t.Add(time.Minute))
	f.ViewFailed(errors.New("x"))
	f.Revoke(nil)
	f.EpochRegressed(2, 1)
	assert.Equal(t, MembershipLeaseLost, f.Lease().Status)
}

func TestLeaseAndEventStrings(t *testing.T) {
	assert.Equal(t, "held", MembershipLeaseHeld.String())
	assert.Equal(t, "released", MembershipLeaseReleased.String())
	assert.Equal(t, "MembershipLeaseStatus(0)", MembershipLeaseStatus(0).String())
	assert.Equal(t, "stale", ViewStale.String())
	assert.Equal(t, "ViewStatus(9)", ViewStatus(9).String())
	assert.Equal(t, "lease-lost: boom", MembershipEvent{Kind: MembershipEventLeaseLost, Err: errors.New("boom")}.String())
	assert.Equal(t, "member-released a#2", MembershipEvent{Kind: MembershipEventMemberReleased, Member: member("a", 2)}.String())
	assert.Equal(t, "ended", MembershipEventEnded.String())
}
