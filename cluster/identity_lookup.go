package cluster

import (
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// IdentityLookup resolves identities to the PIDs of their activations
// (L1). Implementations are driven by one goroutine (the cluster runtime's
// owner loop) and are not safe for concurrent use; time is passed in, so the
// caller (or a test) controls it.
type IdentityLookup interface {
	// SetupMember prepares member mode: this node hosts kinds.
	SetupMember(kinds []string) error
	// SetupClient prepares client mode: this node hosts nothing and only
	// resolves identities of kinds.
	SetupClient(kinds []string) error
	// Get returns the PID of id's activation, activating it on its owner if
	// needed (L2).
	Get(id Identity, now time.Time) (*actor.PID, error)
	// RemovePID forgets id's activation and its cached PID.
	RemovePID(id Identity)
	// UpdateTopology installs a new view (L3).
	UpdateTopology(t Topology) error
	// OnMemberLeft invalidates the activations and PIDs owned by m (L3).
	OnMemberLeft(m Member)
	// PassivateIdle forgets activations not seen for idleTTL.
	PassivateIdle(now time.Time, idleTTL time.Duration)
	// DrainEvents returns and forgets the pending activation events.
	DrainEvents() []VirtualActorEvent
	// DrainCacheEvents returns and forgets the pending PidCache events.
	DrainCacheEvents() []PidCacheEvent
}

// VirtualActorEventKind says what happened to an activation.
type VirtualActorEventKind uint8

// Activation events (L2, L3).
const (
	// VirtualActorActivated: a Get activated an identity that had no record.
	VirtualActorActivated VirtualActorEventKind = iota + 1
	// VirtualActorReactivated: a Get found a record on a member that no
	// longer owns the identity and activated it on the new owner.
	VirtualActorReactivated
	// VirtualActorHit: a Get missed the PidCache but found a record on the
	// current owner; the record's last-seen time moved to now.
	VirtualActorHit
	// VirtualActorPassivated: PassivateIdle dropped an idle record.
	VirtualActorPassivated
	// VirtualActorMoved: a new view gave the identity another owner; the
	// record stays until the next Get (which reactivates it) or a
	// RemovePID. If the old owner is this member, the runtime should stop
	// the activation and call RemovePID once it has terminated (V2.4).
	VirtualActorMoved
	// VirtualActorInvalidated: the record's owner left the view, left the
	// cluster or was blocked; the record is gone.
	VirtualActorInvalidated
)

func (k VirtualActorEventKind) String() string {
	switch k {
	case VirtualActorActivated:
		return "activated"
	case VirtualActorReactivated:
		return "reactivated"
	case VirtualActorHit:
		return "hit"
	case VirtualActorPassivated:
		return "passivated"
	case VirtualActorMoved:
		return "moved"
	case VirtualActorInvalidated:
		return "invalidated"
	}
	return "unknown"
}

// VirtualActorEvent reports a change of an activation record.
type VirtualActorEvent struct {
	Kind     VirtualActorEventKind
	Identity Identity
	PID      *actor.PID
	// Owner is the member key (Member.Key) of the record's owner: the new
	// owner for Activated and Reactivated, the old one otherwise.
	Owner string
	// LeaseID and Token name the local lease of the activation (both zero
	// when the owner is another member): the new lease for
	// Activated/Reactivated, the one released for Passivated/Invalidated
	// (ActivationLedger.Lookup tells whether it is still held). The rest of
	// the lease is in the event already (Identity, Owner) or the view's.
	LeaseID uint64
	Token   FencingToken
}

// LookupConfig configures a PartitionIdentityLookup (L4).
type LookupConfig struct {
	// CacheCapacity bounds the PidCache (> 0). Default 1024.
	CacheCapacity int
	// PIDTTL is how long a resolved PID is served from the cache (> 0).
	// Default 300 s.
	PIDTTL time.Duration
	// IdleTTL is the default idle time before passivation, for callers
	// that pass it to PassivateIdle (>= PIDTTL, because cache hits do not
	// refresh an activation's last-seen time). Default 3600 s.
	IdleTTL time.Duration
	// CacheEventCapacity bounds the undrained PidCache events (>= 0).
	// Default 4096.
	CacheEventCapacity int
	// Hash seeds and selects owner selection. Default DefaultHashConfig.
	Hash HashConfig
}

// DefaultLookupConfig returns the defaults of seed 000 (1024, 300 s,
// 3600 s) with unweighted rendezvous and DefaultHashSeed.
func DefaultLookupConfig() LookupConfig {
	return LookupConfig{
		CacheCapacity:      1024,
		PIDTTL:             300 * time.Second,
		IdleTTL:            3600 * time.Second,
		CacheEventCapacity: 4096,
		Hash:               DefaultHashConfig(),
	}
}

// Validate checks the ranges documented on the fields; errors match
// ErrInvalidConfig.
func (c LookupConfig) Validate() error {
	if err := c.cacheConfig().Validate(); err != nil {
		return err
	}
	if c.IdleTTL < c.PIDTTL {
		return invalidConfig("idle TTL %v must be >= PID TTL %v", c.IdleTTL, c.PIDTTL)
	}
	return c.Hash.Validate()
}

func (c LookupConfig) cacheConfig() PidCacheConfig {
	return PidCacheConfig{Capacity: c.CacheCapacity, TTL: c.PIDTTL, EventCapacity: c.CacheEventCapacity}
}

// ActivationRequest is what a PartitionIdentityLookup asks its Activator to
// do: make Identity run on Owner.
type ActivationRequest struct {
	Identity Identity
	Owner    Member
	// Local is true when Owner is this member; Lease is then the lease the
	// ledger granted for this activation, whose Token the activation must
	// present to storage. When false, Lease is zero: the owner's own ledger
	// grants the lease.
	Local        bool
	Lease        Lease
	TopologyHash uint64
	Epoch        uint64
}

// Activator activates (or locates) the grain of req and returns its PID.
// The lookup calls it on its driving goroutine on a cache miss with no
// record on the current owner; it must not call back into the lookup. An
// error (or a nil PID) makes Get fail with *ActivationFailedError and
// releases the local lease.
type Activator func(req ActivationRequest) (*actor.PID, error)

// PartitionActivatorPrefix is the PID ID prefix of DefaultActivator.
const PartitionActivatorPrefix = "partition-activator/"

// DefaultActivator names the activation deterministically instead of
// spawning it: the PID at req.Owner.Address with ID
// "partition-activator/" + Identity.String(). Every node computes the same
// PID for the same owner, so the owner's placement can spawn the grain under
// that name when the first message arrives. The cluster runtime replaces it
// with an Activator that spawns local grains and asks remote owners.
func DefaultActivator(req ActivationRequest) (*actor.PID, error) {
	return actor.NewPID(req.Owner.Address, PartitionActivatorPrefix+req.Identity.String()), nil
}
