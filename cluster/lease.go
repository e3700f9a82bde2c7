package cluster

import (
	"fmt"
	"time"
)

// LeaseState is the life-cycle state of an activation lease.
type LeaseState uint8

// Lease states. Active and Releasing hold the identity (no second lease is
// granted); Revoked, Released and TimedOut do not.
const (
	// LeaseActive: the owner may run the activation.
	LeaseActive LeaseState = iota + 1
	// LeaseRevoked: the owner was blocked or left; the activation must stop
	// and its writes must be rejected (V1.4, B2.3).
	LeaseRevoked
	// LeaseReleasing: the activation is stopping and must be released before
	// Status.Deadline (graceful shutdown, handover).
	LeaseReleasing
	// LeaseReleased: the activation stopped and gave the lease back.
	LeaseReleased
	// LeaseTimedOut: a Releasing lease passed its deadline.
	LeaseTimedOut
)

func (s LeaseState) String() string {
	switch s {
	case LeaseActive:
		return "active"
	case LeaseRevoked:
		return "revoked"
	case LeaseReleasing:
		return "releasing"
	case LeaseReleased:
		return "released"
	case LeaseTimedOut:
		return "timed-out"
	}
	return fmt.Sprintf("lease-state(%d)", uint8(s))
}

// LeaseStatus is a lease's state; Deadline is set only while Releasing.
type LeaseStatus struct {
	State    LeaseState
	Deadline time.Time
}

// Holds reports whether the status still holds the identity (Active or
// Releasing).
func (s LeaseStatus) Holds() bool { return s.State == LeaseActive || s.State == LeaseReleasing }

// FencingToken orders the activations of one identity: a later activation
// always carries a greater token. Storage keyed by identity keeps the
// greatest token it has seen and rejects writes with a smaller one, so a
// stale activation (one that lost its lease but has not noticed yet) cannot
// overwrite its successor's state.
//
// Tokens compare by Epoch (the view epoch, which never decreases in a
// cluster) then Seq (a counter of the granting ledger that only grows).
type FencingToken struct {
	Epoch uint64
	Seq   uint64
}

// Compare returns -1, 0 or +1 as t is less than, equal to or greater than o.
func (t FencingToken) Compare(o FencingToken) int {
	switch {
	case t.Epoch < o.Epoch:
		return -1
	case t.Epoch > o.Epoch:
		return 1
	case t.Seq < o.Seq:
		return -1
	case t.Seq > o.Seq:
		return 1
	}
	return 0
}

// Less reports whether t orders before o.
func (t FencingToken) Less(o FencingToken) bool { return t.Compare(o) < 0 }

// IsZero reports whether t is the zero token (no lease).
func (t FencingToken) IsZero() bool { return t == FencingToken{} }

func (t FencingToken) String() string { return fmt.Sprintf("%d.%d", t.Epoch, t.Seq) }

// Lease is an activation lease granted by an ActivationLedger: the right of
// Owner to run the single activation of Identity in the view TopologyHash /
// Epoch. Lease is a value; the ledger hands out copies.
type Lease struct {
	// LeaseID is unique within the granting ledger's lifetime.
	LeaseID      uint64
	Identity     Identity
	Owner        string // member ID
	TopologyHash uint64
	Epoch        uint64
	Token        FencingToken
	Status       LeaseStatus
}
