package cluster

import (
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/remote"
)

// Errors the cluster exposes to callers. Match them with errors.Is; typed
// errors below wrap or match one of these sentinels.
var (
	// ErrTimeout: a request or an activation did not complete in time.
	ErrTimeout = errors.New("cluster: timeout")
	// ErrNoSuchKind: no member of the current view hosts the identity's kind.
	ErrNoSuchKind = errors.New("cluster: no member hosts this kind")
	// ErrOwnershipChanged: the caller's topology hash (or view) differs from
	// the owner's; retry once the topology has settled.
	ErrOwnershipChanged = errors.New("cluster: ownership changed")
	// ErrBlocked: the owner is on the block list.
	ErrBlocked = errors.New("cluster: member blocked")
	// ErrShuttingDown: the cluster is leaving gracefully and accepts no new
	// activations or requests.
	ErrShuttingDown = errors.New("cluster: shutting down")
	// ErrNotInstalled: the system has no cluster runtime. Get returned nil
	// (no cluster extension) and a method was called on that nil *Cluster,
	// or the cluster is detached (InstallDetached) and has no membership.
	ErrNotInstalled = errors.New("cluster: not installed")
)

// Errors of the identity core (hashing, PidCache, ledger, identity lookup).
var (
	// ErrNoAuthority: the current view has no members at all (L5).
	ErrNoAuthority = errors.New("cluster: no authority")
	// ErrActivationFailed is matched by every *ActivationFailedError (L5).
	ErrActivationFailed = errors.New("cluster: activation failed")
	// ErrLeaseHeld: another lease of the identity is still Active or
	// Releasing; matched by *LeaseHeldError, which carries the holder (V1.3).
	ErrLeaseHeld = errors.New("cluster: activation lease held")
	// ErrLeaseNotFound: the ledger has no lease for the identity.
	ErrLeaseNotFound = errors.New("cluster: activation lease not found")
	// ErrStaleLease: the lease ID or fencing token is not the identity's
	// current one; a write carrying it must be rejected.
	ErrStaleLease = errors.New("cluster: stale activation lease")
	// ErrStaleView: a view with a lower epoch than the current one.
	ErrStaleView = errors.New("cluster: stale topology view")
	// ErrInvalidIdentity: an identity with an empty kind or ID, or one that
	// is not valid UTF-8, or a string that is not an identity's String form.
	ErrInvalidIdentity = errors.New("cluster: invalid identity")
	// ErrInvalidConfig: a config field is out of range; the wrapping error
	// names the field.
	ErrInvalidConfig = errors.New("cluster: invalid config")
	// ErrInvalidKinds: SetupMember/SetupClient got an empty or duplicated kind.
	ErrInvalidKinds = errors.New("cluster: invalid kinds")
)

// ActivationFailedError reports that the activation of Key failed (L5). Err
// is the cause (the activator's error, or a ledger refusal such as
// *LeaseHeldError); errors.Is matches ErrActivationFailed and the cause.
type ActivationFailedError struct {
	Key Identity
	Err error
}

func (e *ActivationFailedError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("cluster: activation of %s failed", e.Key)
	}
	return fmt.Sprintf("cluster: activation of %s failed: %v", e.Key, e.Err)
}

// Is matches ErrActivationFailed.
func (e *ActivationFailedError) Is(target error) bool { return target == ErrActivationFailed }

// Unwrap returns the cause.
func (e *ActivationFailedError) Unwrap() error { return e.Err }

// LeaseHeldError is returned by Acquire while another lease of the identity
// is Active or Releasing (V1.2, V1.3). Holder is a copy of that lease: when
// it is Releasing, the caller may wait until Holder.Status.Deadline and retry.
type LeaseHeldError struct {
	Holder Lease
}

func (e *LeaseHeldError) Error() string {
	return fmt.Sprintf("cluster: activation lease of %s held by %s (lease %d, %s)",
		e.Holder.Identity, e.Holder.Owner, e.Holder.LeaseID, e.Holder.Status.State)
}

// Is matches ErrLeaseHeld.
func (e *LeaseHeldError) Is(target error) bool { return target == ErrLeaseHeld }

func invalidConfig(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...))
}

// errNilRequest is the error of a request whose message is nil without a
// type (Request(ctx, c, id, nil), Call with req == nil; a nil
// *DepositRequest has one): the remote serializers cannot encode it, so a
// request to a grain on another member fails with this at once; to one on
// the caller's member it fails the same way, instead of handing the grain
// a nil message it answers nothing to (the caller would wait for its
// deadline).
var errNilRequest = fmt.Errorf("%w: <nil> is not registered (a nil request)", remote.ErrUnknownType)
