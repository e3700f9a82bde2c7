package cluster

import (
	"fmt"
	"time"
)

// MembershipLeaseStatus is the state of this incarnation's membership lease.
type MembershipLeaseStatus int

const (
	// MembershipLeaseHeld: the last renewal succeeded; the membership is
	// guaranteed until Deadline.
	MembershipLeaseHeld MembershipLeaseStatus = iota + 1
	// MembershipLeaseLost: renewals are failing (or the membership was
	// stopped). Deadline is frozen at what the last successful renewal
	// guaranteed; the node must stop serving before it. A later successful
	// renewal returns the lease to MembershipLeaseHeld.
	MembershipLeaseLost
	// MembershipLeaseRevoked: the backend no longer holds this incarnation.
	// Terminal; Deadline is cut to the moment it was found out.
	MembershipLeaseRevoked
	// MembershipLeaseReleased: the membership was given up with Leave.
	// Terminal; Deadline is cut to the moment Leave began.
	MembershipLeaseReleased
)

func (s MembershipLeaseStatus) String() string {
	switch s {
	case MembershipLeaseHeld:
		return "held"
	case MembershipLeaseLost:
		return "lost"
	case MembershipLeaseRevoked:
		return "revoked"
	case MembershipLeaseReleased:
		return "released"
	}
	return fmt.Sprintf("MembershipLeaseStatus(%d)", int(s))
}

// MembershipLease is a snapshot of this incarnation's membership lease. The
// times come from the provider's clock; with the system clock they carry
// Go's monotonic reading, so comparing them with time.Now() is immune to
// wall-clock jumps.
type MembershipLease struct {
	Status MembershipLeaseStatus
	// Deadline is when the guarantee ends: the send time of the last
	// successful renewal plus the fence period. It never moves later because
	// of a renewal that did not succeed, and it moves earlier only when the
	// lease is revoked or released.
	Deadline time.Time
	// Renewed is when the last successful renewal was sent.
	Renewed time.Time
	// Failures counts renewals that failed since the last success.
	Failures int
	// Err is why the lease is lost or revoked; nil while held.
	Err error
}

// Valid reports whether the membership is guaranteed at now: the lease is
// held or lost-but-not-yet-expired (a lost lease still protects until its
// deadline) and now is before Deadline. A runtime that serves only while
// Valid and stops at MembershipEventLeaseLost never serves past the guarantee.
func (l MembershipLease) Valid(now time.Time) bool {
	return (l.Status == MembershipLeaseHeld || l.Status == MembershipLeaseLost) && now.Before(l.Deadline)
}

// Remaining returns how long the guarantee lasts from now (0 when invalid).
func (l MembershipLease) Remaining(now time.Time) time.Duration {
	if !l.Valid(now) {
		return 0
	}
	return l.Deadline.Sub(now)
}

// ViewStatus says whether the provider's view stream is current.
type ViewStatus int

const (
	// ViewLive: the provider is receiving views from its backend.
	ViewLive ViewStatus = iota + 1
	// ViewStale: the backend is unreachable or the stream stalled; the last
	// snapshot stays current until updates return.
	ViewStale
	// ViewEnded: the membership ended (Leave or Stop).
	ViewEnded
)

func (s ViewStatus) String() string {
	switch s {
	case ViewLive:
		return "live"
	case ViewStale:
		return "stale"
	case ViewEnded:
		return "ended"
	}
	return fmt.Sprintf("ViewStatus(%d)", int(s))
}

// ViewState is the health of the view stream.
type ViewState struct {
	Status ViewStatus
	// Since is when Status last changed.
	Since time.Time
	// Err is the last backend error while stale; nil otherwise.
	Err error
}
