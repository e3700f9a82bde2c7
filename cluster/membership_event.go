package cluster

import (
	"fmt"
	"time"
)

// MembershipEventKind names what changed in a Membership.
type MembershipEventKind int

const (
	// MembershipEventLeaseLost: a renewal failed while the lease was held, or the
	// membership was stopped. Lease.Deadline is the time by which the node
	// must have stopped serving.
	MembershipEventLeaseLost MembershipEventKind = iota + 1
	// MembershipEventLeaseRestored: a renewal succeeded after MembershipEventLeaseLost.
	MembershipEventLeaseRestored
	// MembershipEventLeaseRevoked: the backend no longer holds this incarnation
	// (expired there, or missing from a view). Terminal.
	MembershipEventLeaseRevoked
	// MembershipEventViewStale: the backend became unreachable or the view stream
	// stalled; the last snapshot is kept (B2.4).
	MembershipEventViewStale
	// MembershipEventViewRestored: views arrive again.
	MembershipEventViewRestored
	// MembershipEventEpochRegressed: the backend's epoch went back (From > To);
	// see ErrEpochRegressed.
	MembershipEventEpochRegressed
	// MembershipEventMemberReleased: Member left with a released marker.
	MembershipEventMemberReleased
	// MembershipEventEnded: the membership ended; the last event on the channel.
	MembershipEventEnded
)

func (k MembershipEventKind) String() string {
	switch k {
	case MembershipEventLeaseLost:
		return "lease-lost"
	case MembershipEventLeaseRestored:
		return "lease-restored"
	case MembershipEventLeaseRevoked:
		return "lease-revoked"
	case MembershipEventViewStale:
		return "view-stale"
	case MembershipEventViewRestored:
		return "view-restored"
	case MembershipEventEpochRegressed:
		return "epoch-regressed"
	case MembershipEventMemberReleased:
		return "member-released"
	case MembershipEventEnded:
		return "ended"
	}
	return fmt.Sprintf("MembershipEventKind(%d)", int(k))
}

// MembershipEvent is one change of a Membership's lease or view health.
type MembershipEvent struct {
	Kind MembershipEventKind
	// At is when the provider observed the change (provider clock).
	At time.Time
	// Lease is the lease state right after the change.
	Lease MembershipLease
	// Err is the cause for lost/revoked/stale events.
	Err error
	// From and To are the epochs of a MembershipEventEpochRegressed event.
	From, To uint64
	// Member is the released member of a MembershipEventMemberReleased event.
	Member Member
}

func (e MembershipEvent) String() string {
	switch e.Kind {
	case MembershipEventEpochRegressed:
		return fmt.Sprintf("%s %d->%d", e.Kind, e.From, e.To)
	case MembershipEventMemberReleased:
		return fmt.Sprintf("%s %s", e.Kind, e.Member.Key())
	}
	if e.Err != nil {
		return fmt.Sprintf("%s: %v", e.Kind, e.Err)
	}
	return e.Kind.String()
}
