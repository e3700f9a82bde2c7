package cluster

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// MemoryConfig configures a MemoryRegistry. The timing relation is the same
// as for every provider: RenewInterval < FencePeriod < LeaseTTL (renewals in
// memory take no time, so there is no request timeout to add).
type MemoryConfig struct {
	// LeaseTTL: the registry removes a member that has not renewed for this
	// long (an abrupt stop, or a partitioned member).
	LeaseTTL time.Duration
	// RenewInterval: how often each member renews.
	RenewInterval time.Duration
	// FencePeriod: the lease deadline is the last renewal plus this.
	FencePeriod time.Duration
	// Clock drives renewals, expiry and lease deadlines; nil means the system
	// clock. Tests pass a *scheduler.ManualClock: every renewal and expiry
	// then runs synchronously inside Advance.
	Clock scheduler.Clock
	// Logger receives joins, leaves, expiries and lease changes; nil
	// discards.
	Logger *slog.Logger
	// EventBuffer is each membership's event buffer; 0 means
	// DefaultMembershipEventBuffer. At most MaxMembershipEventBuffer.
	EventBuffer int
	// ReleasedRetention is how long a released marker (a graceful leave,
	// a fenced incarnation's release) is kept; 0 means
	// DefaultReleasedRetention. An older one is dropped when the next is
	// recorded: by then its incarnation has long left every view, and
	// every view carries the markers, so a process that runs for long with
	// members coming and going keeps a bounded set.
	ReleasedRetention time.Duration
}

// DefaultReleasedRetention is what a zero MemoryConfig.ReleasedRetention
// means (the Consul provider's default too).
const DefaultReleasedRetention = 10 * time.Minute

// DefaultMemoryConfig returns a TTL of 3 s, renewals every 500 ms and a
// fence period of 2 s.
func DefaultMemoryConfig() MemoryConfig {
	return MemoryConfig{LeaseTTL: 3 * time.Second, RenewInterval: 500 * time.Millisecond, FencePeriod: 2 * time.Second}
}

// Validate checks that the durations are positive and that RenewInterval <
// FencePeriod < LeaseTTL; errors wrap ErrInvalidProviderConfig.
func (c MemoryConfig) Validate() error {
	switch {
	case c.LeaseTTL <= 0:
		return fmt.Errorf("%w: LeaseTTL %v must be positive", ErrInvalidProviderConfig, c.LeaseTTL)
	case c.RenewInterval <= 0:
		return fmt.Errorf("%w: RenewInterval %v must be positive", ErrInvalidProviderConfig, c.RenewInterval)
	case c.FencePeriod <= 0:
		return fmt.Errorf("%w: FencePeriod %v must be positive", ErrInvalidProviderConfig, c.FencePeriod)
	case c.RenewInterval >= c.FencePeriod:
		return fmt.Errorf("%w: RenewInterval %v must be shorter than FencePeriod %v, or a healthy member loses its lease between renewals",
			ErrInvalidProviderConfig, c.RenewInterval, c.FencePeriod)
	case c.FencePeriod >= c.LeaseTTL:
		return fmt.Errorf("%w: FencePeriod %v must be shorter than LeaseTTL %v, or the registry may drop a member that still believes it holds its lease",
			ErrInvalidProviderConfig, c.FencePeriod, c.LeaseTTL)
	case c.EventBuffer < 0 || c.EventBuffer > MaxMembershipEventBuffer:
		return fmt.Errorf("%w: EventBuffer %d must be between 0 and %d", ErrInvalidProviderConfig, c.EventBuffer, MaxMembershipEventBuffer)
	case c.ReleasedRetention < 0:
		return fmt.Errorf("%w: ReleasedRetention %v must not be negative", ErrInvalidProviderConfig, c.ReleasedRetention)
	}
	return nil
}

// MemoryRegistry is the in-memory membership backend: the embedded default
// for a single process and the provider of multi-node tests, where several
// systems in one process share one registry. It implements Provider with
// the same semantics as the Consul provider: a view epoch that grows on
// every change, leases with a TTL on an injectable clock, graceful Leave
// with a released marker, and an abrupt stop (Membership.Stop) after which
// the member is removed only when its lease expires; its memberships
// implement Retirer. Partition and Heal cut a member off the registry and
// back, for failure tests.
//
// It starts no goroutine: renewals and expiries are timers of the clock, and
// snapshots are delivered from whichever goroutine changed the registry
// (the caller of Join or Leave, or a timer). All methods are safe for
// concurrent use.
type MemoryRegistry struct {
	cfg    MemoryConfig
	clock  scheduler.Clock
	logger *slog.Logger

	mu          sync.Mutex
	closed      bool
	epoch       uint64
	entries     map[string]*memoryEntry
	handles     map[*memoryMembership]struct{}
	seen        map[string]struct{}
	released    map[string]releasedMarker
	partitioned map[string]bool
}

type memoryEntry struct {
	member     Member
	handle     *memoryMembership
	expires    time.Time
	stopExpiry func() bool
}

// NewMemoryRegistry returns an empty registry, or an error wrapping
// ErrInvalidProviderConfig.
func NewMemoryRegistry(cfg MemoryConfig) (*MemoryRegistry, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Clock == nil {
		cfg.Clock = scheduler.SystemClock{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.ReleasedRetention == 0 {
		cfg.ReleasedRetention = DefaultReleasedRetention
	}
	return &MemoryRegistry{
		cfg:         cfg,
		clock:       cfg.Clock,
		logger:      cfg.Logger,
		entries:     make(map[string]*memoryEntry),
		handles:     make(map[*memoryMembership]struct{}),
		seen:        make(map[string]struct{}),
		released:    make(map[string]releasedMarker),
		partitioned: make(map[string]bool),
	}, nil
}

// Join implements Provider. It registers self at a new epoch, grants its
// lease (deadline now+FencePeriod) and delivers the new view to every member,
// self included, before it returns. It fails with ErrRegistryClosed,
// ErrInvalidMember, ErrIncarnationReused (the key was registered before, even
// if it left since) or ctx's error.
func (r *MemoryRegistry) Join(ctx context.Context, self Member) (Membership, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := ValidateMember(self); err != nil {
		return nil, err
	}
	feed, err := NewMembershipFeed(MembershipFeedConfig{
		Self: self, Fence: r.cfg.FencePeriod, Now: r.clock.Now, Logger: r.logger, EventBuffer: r.cfg.EventBuffer,
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return nil, ErrRegistryClosed
	}
	key := self.Key()
	if _, ok := r.seen[key]; ok {
		return nil, fmt.Errorf("%w: %s", ErrIncarnationReused, key)
	}
	m := &memoryMembership{MembershipFeed: feed, reg: r, key: key}
	now := r.clock.Now()
	e := &memoryEntry{member: cloneMember(self), handle: m, expires: now.Add(r.cfg.LeaseTTL)}
	r.seen[key] = struct{}{}
	r.entries[key] = e
	r.handles[m] = struct{}{}
	r.epoch++
	feed.SetJoinEpoch(r.epoch)
	if r.epoch == 1 {
		// The registry's first registration ever: this incarnation founded
		// the cluster. Its first view is epoch 1 only when it reads it
		// before the next join: the feed keeps the latest view, so a
		// founder that read epoch 2 first took itself for a member that
		// joined an existing cluster, waited W, and could vouch for
		// nobody, so every member waited W before its first activation
		// (TestMemoryFounderFoundedItsCluster; 17 of 30 fresh VirtualTime
		// clusters of testkit waited 0.7 to 1.4 s for their first call).
		feed.SetFounded(now)
	}
	feed.Renewed(now)
	e.stopExpiry = r.clock.AfterFunc(r.cfg.LeaseTTL, func() { r.expire(key, e) })
	m.stopRenew = r.clock.AfterFunc(r.cfg.RenewInterval, m.renew)
	r.logger.Info("cluster: member joined", "member", key, "epoch", r.epoch)
	r.broadcastLocked()
	return m, nil
}

// Topology returns the registry's current view.
func (r *MemoryRegistry) Topology() Topology {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.topologyLocked()
}

// Partition cuts the member with key (Member.Key) off the registry, as a
// network partition would: its renewals fail (it reports
// MembershipEventLeaseLost and MembershipEventViewStale), it receives no
// views and a Leave cannot reach the registry; the others keep seeing it
// until its lease expires.
func (r *MemoryRegistry) Partition(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.partitioned[key] = true
}

// Heal ends a Partition. The member's next renewal succeeds if the registry
// still holds it (its lease is restored and it gets the current view) and
// revokes its lease otherwise.
func (r *MemoryRegistry) Heal(key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.partitioned, key)
}

// Close ends every membership (as Stop does), cancels all timers and makes
// Join fail with ErrRegistryClosed. Idempotent.
func (r *MemoryRegistry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for m := range r.handles {
		m.endLocked()
	}
	for _, e := range r.entries {
		e.stopExpiry()
	}
	clear(r.entries)
}

func (r *MemoryRegistry) topologyLocked() Topology {
	ms := make([]Member, 0, len(r.entries))
	for _, e := range r.entries {
		ms = append(ms, e.member)
	}
	return NewTopology(r.epoch, ms)
}

// releasedMarker is a released incarnation and when it was released.
type releasedMarker struct {
	member Member
	at     time.Time
}

func (r *MemoryRegistry) releasedLocked() []Member {
	out := make([]Member, 0, len(r.released))
	for _, m := range r.released {
		out = append(out, m.member)
	}
	return out
}

// releaseLocked records the released marker of key, dropping the markers
// older than ReleasedRetention (TestMemoryRegistryReleasedRetention).
func (r *MemoryRegistry) releaseLocked(key string, m Member) {
	now := r.clock.Now()
	for k, old := range r.released {
		if now.Sub(old.at) > r.cfg.ReleasedRetention {
			delete(r.released, k)
		}
	}
	r.released[key] = releasedMarker{member: m, at: now}
}

// broadcastLocked delivers the current view to every membership that is not
// partitioned.
func (r *MemoryRegistry) broadcastLocked() {
	t := r.topologyLocked()
	rel := r.releasedLocked()
	for m := range r.handles {
		if r.partitioned[m.key] {
			m.missed = true // delivered at its next successful renewal
			continue
		}
		m.missed = false
		_ = m.Publish(t, rel) // epochs only grow here; Publish copies t
	}
}

// expire is the expiry timer of entry e: it removes e when its lease ran out
// and re-arms itself otherwise.
func (r *MemoryRegistry) expire(key string, e *memoryEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.entries[key] != e {
		return
	}
	if now := r.clock.Now(); now.Before(e.expires) {
		e.stopExpiry = r.clock.AfterFunc(e.expires.Sub(now), func() { r.expire(key, e) })
		return
	}
	delete(r.entries, key)
	r.epoch++
	r.logger.Info("cluster: member expired", "member", key, "epoch", r.epoch)
	r.broadcastLocked()
}

var _ Retirer = (*memoryMembership)(nil)

// memoryMembership is a Membership of a MemoryRegistry. Its mutable fields
// are guarded by reg.mu.
type memoryMembership struct {
	*MembershipFeed
	reg       *MemoryRegistry
	key       string
	done      bool
	stopRenew func() bool
	// retired: Retire recorded the released marker.
	retired bool
	// missed: a view was not delivered to it while it was partitioned. A
	// partition cut and healed between two renewals fails none, so the
	// view is not stale, yet the member must still get what it missed.
	missed bool
}

// renew is the renewal timer.
func (m *memoryMembership) renew() {
	r := m.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.done {
		return
	}
	now := r.clock.Now()
	e := r.entries[m.key]
	switch {
	case r.partitioned[m.key]:
		m.RenewalFailed(fmt.Errorf("%w: %w", ErrRenewalFailed, ErrPartitioned))
		m.ViewFailed(ErrPartitioned)
	case e == nil || e.handle != m:
		// The registry dropped this incarnation while it could not renew.
		m.Revoke(fmt.Errorf("%w: %s expired in the registry", ErrLeaseRevoked, m.key))
		_ = m.Publish(r.topologyLocked(), r.releasedLocked())
		m.stopRenew = nil
		return
	default:
		e.expires = now.Add(r.cfg.LeaseTTL)
		m.Renewed(now)
		if m.missed || m.ViewState().Status == ViewStale {
			m.missed = false
			_ = m.Publish(r.topologyLocked(), r.releasedLocked())
		}
	}
	m.stopRenew = r.clock.AfterFunc(r.cfg.RenewInterval, m.renew)
}

// endLocked stops the renewal timer and ends the feed.
func (m *memoryMembership) endLocked() {
	if m.done {
		return
	}
	m.done = true
	if m.stopRenew != nil {
		m.stopRenew()
	}
	delete(m.reg.handles, m)
	m.End()
}

// Leave implements Membership. The registry answers at once, so ctx cannot
// expire mid-way. A partitioned member cannot reach the registry: its
// membership ends locally, Leave returns an error wrapping ErrPartitioned,
// and the registry drops it when its lease expires. A revoked member just
// ends.
func (m *memoryMembership) Leave(context.Context) error {
	r := m.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	if m.done {
		return ErrMembershipEnded
	}
	m.Release()
	defer m.endLocked()
	if r.partitioned[m.key] {
		return fmt.Errorf("cluster: leave of %s: %w", m.key, ErrPartitioned)
	}
	e := r.entries[m.key]
	if e == nil || e.handle != m {
		return nil
	}
	e.stopExpiry()
	delete(r.entries, m.key)
	r.releaseLocked(m.key, e.member)
	r.epoch++
	r.logger.Info("cluster: member left", "member", m.key, "epoch", r.epoch)
	delete(r.handles, m) // the leaver gets no view without itself
	r.broadcastLocked()
	return nil
}

// Retire implements Retirer: the membership ends (as Stop ends it) if it
// has not, the incarnation's released marker is recorded and its entry,
// when the registry still holds it, removed, at a new epoch delivered to
// every member. The marker is recorded also when the entry is gone already
// (its lease expired, or it was evicted): the others then stop waiting W
// for it. A partitioned member cannot reach the registry: Retire returns
// an error wrapping ErrPartitioned and may be called again after Heal. A
// closed registry returns ErrRegistryClosed. Once it succeeded, Retire
// returns nil at once.
func (m *memoryMembership) Retire(context.Context) error {
	r := m.reg
	r.mu.Lock()
	defer r.mu.Unlock()
	m.Release() // a no-op once the membership ended
	m.endLocked()
	switch {
	case m.retired:
		return nil
	case r.closed:
		return ErrRegistryClosed
	case r.partitioned[m.key]:
		return fmt.Errorf("cluster: retire of %s: %w", m.key, ErrPartitioned)
	}
	if _, ok := r.released[m.key]; ok { // left already
		m.retired = true
		return nil
	}
	if e := r.entries[m.key]; e != nil && e.handle == m {
		e.stopExpiry()
		delete(r.entries, m.key)
	}
	m.retired = true
	r.releaseLocked(m.key, m.Self())
	r.epoch++
	r.logger.Info("cluster: member retired", "member", m.key, "epoch", r.epoch)
	r.broadcastLocked()
	return nil
}

// Stop implements Membership: the member vanishes without leaving and the
// registry removes it when its lease expires.
func (m *memoryMembership) Stop(context.Context) error {
	m.reg.mu.Lock()
	defer m.reg.mu.Unlock()
	m.endLocked()
	return nil
}

// LeaseTiming implements LeaseTimer: renewals are synchronous, so their
// timeout is zero.
func (r *MemoryRegistry) LeaseTiming() LeaseTiming {
	return LeaseTiming{RenewInterval: r.cfg.RenewInterval, FencePeriod: r.cfg.FencePeriod, LeaseTTL: r.cfg.LeaseTTL}
}

// Evict implements Evictor: m is removed from the registry at once, as an
// operator's forced removal would remove it. The other members see it gone
// in their next view; its own membership sees itself missing and is revoked
// (the cluster runtime fences it and joins again as a new incarnation).
// Evicting a member that is not registered does nothing.
func (r *MemoryRegistry) Evict(_ context.Context, m Member) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return ErrRegistryClosed
	}
	key := m.Key()
	e := r.entries[key]
	if e == nil {
		return nil
	}
	if e.stopExpiry != nil {
		e.stopExpiry()
	}
	delete(r.entries, key)
	r.epoch++
	r.logger.Info("cluster: member evicted", "member", key, "epoch", r.epoch)
	r.broadcastLocked()
	return nil
}
