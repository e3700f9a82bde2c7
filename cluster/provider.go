package cluster

import (
	"context"
	"errors"
	"fmt"
)

// Provider is a membership backend (the in-memory registry, Consul, ...).
// It is the plug-in contract between the cluster runtime and whatever keeps
// the list of live members.
//
// Join is called by the cluster runtime (or a test) once per process
// incarnation, from any goroutine. It blocks until self is registered with
// the backend and its membership lease was granted (so Membership.Lease is
// valid when Join returns), or until ctx ends or the backend refuses; it does
// not wait for the first view, which arrives on Membership.Snapshots. Join
// never resumes an old incarnation: a Member whose (ID, Incarnation) was
// already registered with the backend is refused with ErrIncarnationReused
// or a provider error that wraps it. A Provider may host several members
// (the in-memory registry hosts a whole test cluster); every Join returns an
// independent Membership that the caller owns and must end with Leave or
// Stop.
//
// Optional interfaces, detected with a type assertion: LeaseTimer (the lease
// timing, which Config.Validate checks), Evictor (forced removal of a blocked
// member) and ClusterNamer (the cluster name the backend groups members by,
// which must equal Config.Name).
//
// Founding. A Membership may also have the method
// Founded() (at time.Time, ok bool) (MembershipFeed has it): ok when this
// incarnation founded its cluster at at, on its lease's clock, that is, no
// incarnation of any member was registered with the backend before at,
// and every later one is not the founder. A founder whose first view
// arrives within W/2 of at activates without waiting out members that may
// have left before it came: nobody can have activated anything yet. The
// in-memory registry founds with its first Join ever (its founder may read
// a later view than epoch 1 first: the view stream keeps the latest); the
// Consul provider implements it with a record created by check-and-set.
type Provider interface {
	Join(ctx context.Context, self Member) (Membership, error)
}

// ClusterNamer is an optional interface of a Provider whose backend groups
// members by a cluster name of its own (the Consul provider's
// Config.Cluster): ClusterName returns that name. The views of such a
// provider list every member that joined under the name, whatever cluster
// it belongs to, so Config.Validate and Install refuse, with
// ErrInvalidConfig, a provider whose ClusterName differs from Config.Name
// (after Name defaulted to remote's SystemName): otherwise two clusters
// that leave the provider's name at its default see each other's members,
// and grains owned by the other cluster's members fail their calls with
// ErrTimeout (the owner's remote handshake refuses the caller). Called
// once, at validation and install; it must not block.
type ClusterNamer interface {
	ClusterName() string
}

// checkProviderName returns an error matching ErrInvalidConfig when p
// states a cluster name other than name.
func checkProviderName(p Provider, name string) error {
	n, ok := p.(ClusterNamer)
	if !ok {
		return nil
	}
	if pn := n.ClusterName(); pn != name {
		return invalidConfig("Name %q differs from the Provider's cluster name %q: its views would list the members of cluster %q; "+
			"set the provider's cluster name (consul: Config.Cluster) to %q, or Name to %q",
			name, pn, pn, name, pn)
	}
	return nil
}

// Membership is one incarnation's membership, as returned by Provider.Join.
// All methods are safe for concurrent use.
//
// Views. Snapshots delivers Topology values: the live members, an Epoch that
// only grows, and the topology hash. Delivery is "latest wins": the channel
// holds at most one snapshot and the provider replaces an unread one with the
// newer one, so a slow consumer never blocks the provider and never sees an
// older view after a newer one; it may skip intermediate views. Snapshots are
// idempotent (the same epoch is never delivered twice) and complete, so a
// consumer derives joined/left members with Diff against the previous one it
// handled. The consumer may block as long as it likes between receives. The
// provider owns its own copy; a received Topology belongs to the receiver.
// The channel is closed when the membership ends (Leave, Stop); Latest keeps
// the last view after that.
//
// Health. If the backend becomes unreachable or the view stream stalls, no
// snapshot is delivered, the last one stays current, ViewState reports
// ViewStale and a MembershipEventViewStale event is emitted; when updates return,
// the current view is delivered (if it changed), ViewState goes back to
// ViewLive and MembershipEventViewRestored is emitted (B2.4).
//
// Lease. The provider renews this incarnation's membership periodically.
// Lease reports until when, on this process's monotonic clock, the membership
// is guaranteed: the time the last successful renewal was sent plus the
// provider's fence period, which is shorter than the backend's lease TTL, so
// no other node can see this one gone (and take over its grains) before that
// deadline. A failed renewal, or this incarnation missing from a view,
// emits MembershipEventLeaseLost or MembershipEventLeaseRevoked; the deadline is never
// extended by a renewal that did not succeed. The cluster runtime stops
// serving before the deadline.
//
// Events delivers MembershipEvent values on a bounded buffered channel; when
// the buffer is full the event is dropped and counted (DroppedEvents), never
// blocking the provider. Every state an event reports can also be read with
// Lease and ViewState. The channel is closed when the membership ends, after
// a final MembershipEventEnded event.
//
// Goroutines. A membership whose goroutines may outlive a Leave or Stop
// cut short by its ctx implements extension.Lingerer: Terminated returns a
// channel closed once they have returned (it must not block, and is open
// while the membership runs). The cluster's Terminated, and so the actor
// system's, waits for it for every membership the cluster ended.
type Membership interface {
	// Self returns the member this membership registered.
	Self() Member
	// Snapshots returns the latest-wins view channel described above.
	Snapshots() <-chan Topology
	// Latest returns the newest view delivered so far and whether there was
	// one. It never blocks.
	Latest() (Topology, bool)
	// Released returns the incarnations known to have left with a released
	// marker (Leave), sorted like Topology.Members. A released member holds
	// nothing: its grains may be activated elsewhere without a wait-out.
	Released() []Member
	// Lease returns this incarnation's lease state. It never blocks.
	Lease() MembershipLease
	// ViewState reports whether the view stream is live or stale.
	ViewState() ViewState
	// Events returns the event channel described above.
	Events() <-chan MembershipEvent
	// DroppedEvents returns how many events were dropped on a full buffer.
	DroppedEvents() uint64
	// Leave ends the membership gracefully: the lease is given up at once
	// (Lease reports MembershipLeaseReleased and is no longer valid), a
	// released marker for this incarnation is published where the backend
	// supports it, the membership is removed so that other members see it
	// gone in their next view, the provider's goroutines end and both
	// channels are closed. Call it only after this node stopped serving
	// what its membership protects. ctx bounds the whole call; on expiry
	// the local goroutines still end and the backend drops the membership
	// when its lease expires. Leave after the membership ended returns
	// ErrMembershipEnded.
	Leave(ctx context.Context) error
	// Stop ends the membership abruptly, as a crash would: the provider's
	// goroutines end and the channels are closed, but nothing is removed
	// from the backend, which drops this incarnation when its lease TTL
	// expires. The lease keeps its last deadline. Prefer Leave. Stop is
	// idempotent and returns nil when the membership already ended.
	Stop(ctx context.Context) error
}

// Evictor is an optional interface of a Provider: Evict removes another
// member from the backend at once (its lease is revoked there), as an
// operator's forced removal does. The cluster runtime evicts a member that
// is put on the block list, so that every member sees it leave and the
// member itself fences, and its grains move without two activations. A
// Provider without it leaves a blocked member in the view until its lease
// expires on its own.
type Evictor interface {
	Evict(ctx context.Context, m Member) error
}

// Errors of the membership providers. Provider packages wrap them (with %w)
// or define their own sentinels with their package prefix.
var (
	// ErrMembershipEnded: the membership was left or stopped.
	ErrMembershipEnded = errors.New("cluster: membership ended")
	// ErrIncarnationReused: Join got a member whose (ID, Incarnation) was
	// registered before; a restarted process must use a new incarnation.
	ErrIncarnationReused = errors.New("cluster: incarnation reused")
	// ErrInvalidMember: Join got a member without an ID.
	ErrInvalidMember = errors.New("cluster: invalid member")
	// ErrInvalidProviderConfig: a provider config field is out of range or
	// the timing relations are unsafe; the wrapping error names the field.
	ErrInvalidProviderConfig = errors.New("cluster: invalid provider config")
	// ErrLeaseRevoked: the backend no longer holds this incarnation (its
	// lease expired there or it is missing from the view). Terminal: the
	// node must stop serving and join again with a new incarnation.
	ErrLeaseRevoked = errors.New("cluster: membership lease revoked")
	// ErrRenewalFailed: a lease renewal did not succeed; the deadline stays
	// where the last successful renewal put it.
	ErrRenewalFailed = errors.New("cluster: membership renewal failed")
	// ErrEpochRegressed: the backend reported a view epoch lower than one
	// already delivered (or the same epoch with other members). The view is
	// not delivered; providers that can re-base their epochs report it with
	// a MembershipEventEpochRegressed event and continue.
	ErrEpochRegressed = errors.New("cluster: view epoch regressed")
	// ErrPartitioned: the in-memory registry cut this member off (fault
	// injection with MemoryRegistry.Partition).
	ErrPartitioned = errors.New("cluster: member partitioned from the registry")
	// ErrRegistryClosed: the in-memory registry was closed.
	ErrRegistryClosed = errors.New("cluster: registry closed")
)

// ValidateMember checks what every provider requires of a joining member: a
// non-empty ID. It returns an error wrapping ErrInvalidMember.
func ValidateMember(m Member) error {
	if m.ID == "" {
		return fmt.Errorf("%w: empty ID", ErrInvalidMember)
	}
	return nil
}
