package cluster

import (
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultMembershipEventBuffer is the event buffer of a MembershipFeed whose
// config leaves EventBuffer at 0.
const DefaultMembershipEventBuffer = 64

// MaxMembershipEventBuffer bounds a provider's EventBuffer setting: the
// buffer is allocated when a member joins, so a larger one is refused by
// the provider's Validate instead of failing that allocation.
const MaxMembershipEventBuffer = 1 << 16

// MembershipFeedConfig configures a MembershipFeed.
type MembershipFeedConfig struct {
	// Self is the member the membership registered.
	Self Member
	// Fence is added to the send time of a successful renewal to give the
	// lease deadline. It must be shorter than the backend's lease TTL.
	Fence time.Duration
	// Now is the clock; nil means time.Now (monotonic).
	Now func() time.Time
	// Logger receives lease and view-health changes; nil discards.
	Logger *slog.Logger
	// EventBuffer is the capacity of the Events channel; 0 means
	// DefaultMembershipEventBuffer.
	EventBuffer int
}

// MembershipFeed implements the consumer side of a Membership (everything
// but Leave and Stop) for providers: a provider embeds *MembershipFeed in its
// membership type, drives it with the producer methods (Renewed,
// RenewalFailed, Revoke, Release, Publish, ViewFailed, EpochRegressed, End)
// and adds Leave and Stop. The producer methods may be called from any
// goroutine, never block and are no-ops after End, so a provider's loops
// need no extra synchronisation with the consumer. It is not for users.
type MembershipFeed struct {
	self   Member
	fence  time.Duration
	now    func() time.Time
	logger *slog.Logger

	snapshots chan Topology
	events    chan MembershipEvent
	dropped   atomic.Uint64

	mu        sync.Mutex
	ended     bool
	joinEpoch uint64
	founded   time.Time // SetFounded: zero unless this incarnation founded its cluster
	latest    Topology
	hasLatest bool
	lease     MembershipLease
	view      ViewState
	released  map[string]Member
}

// NewMembershipFeed returns a feed whose lease is not yet granted (Lease has
// a zero Deadline, so it is not Valid) and whose view is live; the provider
// calls Renewed once its registration succeeded. It returns an error
// wrapping ErrInvalidProviderConfig when Fence is not positive.
func NewMembershipFeed(cfg MembershipFeedConfig) (*MembershipFeed, error) {
	if cfg.Fence <= 0 {
		return nil, fmt.Errorf("%w: fence period %v must be positive", ErrInvalidProviderConfig, cfg.Fence)
	}
	if err := ValidateMember(cfg.Self); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.EventBuffer <= 0 {
		cfg.EventBuffer = DefaultMembershipEventBuffer
	}
	f := &MembershipFeed{
		self:      cloneMember(cfg.Self),
		fence:     cfg.Fence,
		now:       cfg.Now,
		logger:    cfg.Logger.With("member", cfg.Self.Key()),
		snapshots: make(chan Topology, 1),
		events:    make(chan MembershipEvent, cfg.EventBuffer),
		released:  make(map[string]Member),
	}
	f.lease = MembershipLease{Status: MembershipLeaseLost, Err: ErrRenewalFailed}
	f.view = ViewState{Status: ViewLive, Since: cfg.Now()}
	return f, nil
}

// Self implements Membership.
func (f *MembershipFeed) Self() Member { return cloneMember(f.self) }

// Snapshots implements Membership.
func (f *MembershipFeed) Snapshots() <-chan Topology { return f.snapshots }

// Events implements Membership.
func (f *MembershipFeed) Events() <-chan MembershipEvent { return f.events }

// DroppedEvents implements Membership.
func (f *MembershipFeed) DroppedEvents() uint64 { return f.dropped.Load() }

// Latest implements Membership.
func (f *MembershipFeed) Latest() (Topology, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.hasLatest {
		return Topology{}, false
	}
	return cloneTopology(f.latest), true
}

// Released implements Membership.
func (f *MembershipFeed) Released() []Member {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Member, 0, len(f.released))
	for _, m := range f.released {
		out = append(out, cloneMember(m))
	}
	slices.SortFunc(out, compareMembers)
	return out
}

// Lease implements Membership.
func (f *MembershipFeed) Lease() MembershipLease {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lease
}

// ViewState implements Membership.
func (f *MembershipFeed) ViewState() ViewState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.view
}

// Ended reports whether End was called.
func (f *MembershipFeed) Ended() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

// SetJoinEpoch records the epoch at which the backend registered Self: from
// then on a published view with an epoch at or above it that lacks Self
// revokes the lease (the node finds itself absent from the view).
func (f *MembershipFeed) SetJoinEpoch(epoch uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.joinEpoch = epoch
}

// SetFounded records that this incarnation founded its cluster at at, on
// the clock of the lease (the provider's Now): no incarnation of any member
// was registered with the backend before at, and every one registered
// later learns that it is not the founder. A provider that cannot tell
// never calls it. See Founded.
func (f *MembershipFeed) SetFounded(at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.founded = at
}

// Founded reports when this incarnation founded its cluster (SetFounded),
// and false when it did not or its provider cannot tell. The cluster
// runtime asks a Membership for it through an optional method of this
// signature (see Provider): a member whose first view comes within W/2 of
// the founding needs no wait-out, as in a provider's first view ever
// (epoch 1), since no member can have granted an activation before it
// (docs/cluster.md, the four rules).
func (f *MembershipFeed) Founded() (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.founded, !f.founded.IsZero()
}

// Renewed records a successful renewal that was sent at sent: the lease is
// held and its deadline becomes sent+Fence (never earlier than before). A
// lost lease emits MembershipEventLeaseRestored. Ignored once the lease is
// revoked or released.
func (f *MembershipFeed) Renewed(sent time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended || f.terminal() {
		return
	}
	wasLost := f.lease.Status == MembershipLeaseLost && !f.lease.Renewed.IsZero()
	deadline := sent.Add(f.fence)
	if deadline.Before(f.lease.Deadline) {
		deadline = f.lease.Deadline
	}
	f.lease = MembershipLease{Status: MembershipLeaseHeld, Deadline: deadline, Renewed: sent}
	if wasLost {
		f.logger.Info("cluster: membership lease restored", "deadline_in", deadline.Sub(f.now()))
		f.emit(MembershipEvent{Kind: MembershipEventLeaseRestored})
	}
}

// RenewalFailed records a renewal that did not succeed. The deadline stays;
// the first failure after a success emits MembershipEventLeaseLost.
func (f *MembershipFeed) RenewalFailed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended || f.terminal() {
		return
	}
	if err == nil {
		err = ErrRenewalFailed
	}
	f.lease.Failures++
	f.lease.Err = err
	if f.lease.Status == MembershipLeaseHeld {
		f.lease.Status = MembershipLeaseLost
		f.logger.Warn("cluster: membership lease lost", "err", err, "deadline_in", f.lease.Deadline.Sub(f.now()))
		f.emit(MembershipEvent{Kind: MembershipEventLeaseLost, Err: err})
	}
}

// Revoke records that the backend no longer holds Self: the lease becomes
// MembershipLeaseRevoked with its deadline cut to now, and
// MembershipEventLeaseRevoked is emitted once. err should wrap ErrLeaseRevoked.
func (f *MembershipFeed) Revoke(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.revokeLocked(err)
}

func (f *MembershipFeed) revokeLocked(err error) {
	if f.ended || f.terminal() {
		return
	}
	if err == nil {
		err = ErrLeaseRevoked
	}
	f.lease.Status = MembershipLeaseRevoked
	f.lease.Err = err
	f.cutDeadline()
	f.logger.Warn("cluster: membership lease revoked", "err", err)
	f.emit(MembershipEvent{Kind: MembershipEventLeaseRevoked, Err: err})
}

// Release marks the lease given up (Leave began): MembershipLeaseReleased
// with the deadline cut to now. No event; End follows.
func (f *MembershipFeed) Release() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended || f.terminal() {
		return
	}
	f.lease.Status = MembershipLeaseReleased
	f.lease.Err = nil
	f.cutDeadline()
}

// Revoked reports whether the lease was revoked.
func (f *MembershipFeed) Revoked() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lease.Status == MembershipLeaseRevoked
}

func (f *MembershipFeed) terminal() bool {
	return f.lease.Status == MembershipLeaseRevoked || f.lease.Status == MembershipLeaseReleased
}

func (f *MembershipFeed) cutDeadline() {
	if now := f.now(); now.Before(f.lease.Deadline) {
		f.lease.Deadline = now
	}
}

// ViewFailed records a failed or stalled view request: the first one after
// live views emits MembershipEventViewStale; the last snapshot stays current.
func (f *MembershipFeed) ViewFailed(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return
	}
	f.view.Err = err
	if f.view.Status == ViewLive {
		f.view = ViewState{Status: ViewStale, Since: f.now(), Err: err}
		f.logger.Warn("cluster: membership view stale, keeping the last snapshot", "err", err)
		f.emit(MembershipEvent{Kind: MembershipEventViewStale, Err: err})
	}
}

// EpochRegressed reports that the backend's epoch went back from from to to
// (the provider re-bases its epochs so that delivered ones keep growing).
func (f *MembershipFeed) EpochRegressed(from, to uint64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return
	}
	f.logger.Warn("cluster: membership view epoch regressed", "from", from, "to", to)
	f.emit(MembershipEvent{Kind: MembershipEventEpochRegressed, From: from, To: to})
}

// Publish delivers view t (built with NewTopology) and the released
// markers known with it. A stale view becomes live (MembershipEventViewRestored)
// even when t repeats the current snapshot. t is not delivered when it
// repeats the current epoch and hash (idempotence) or when its epoch is
// lower than the current one, or equal with other members: then Publish
// emits MembershipEventEpochRegressed and returns an error wrapping
// ErrEpochRegressed. A view at or after the join epoch without Self revokes
// the lease. Released markers new to the feed emit MembershipEventMemberReleased;
// released is the provider's whole set, and markers not in it are dropped.
// After End it returns ErrMembershipEnded.
func (f *MembershipFeed) Publish(t Topology, released []Member) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return ErrMembershipEnded
	}
	if f.hasLatest && (t.Epoch < f.latest.Epoch || (t.Epoch == f.latest.Epoch && t.Hash != f.latest.Hash)) {
		f.logger.Warn("cluster: membership view epoch regressed", "from", f.latest.Epoch, "to", t.Epoch)
		f.emit(MembershipEvent{Kind: MembershipEventEpochRegressed, From: f.latest.Epoch, To: t.Epoch})
		return fmt.Errorf("%w: epoch %d after %d", ErrEpochRegressed, t.Epoch, f.latest.Epoch)
	}
	if f.view.Status == ViewStale {
		f.view = ViewState{Status: ViewLive, Since: f.now()}
		f.logger.Info("cluster: membership view restored", "epoch", t.Epoch)
		f.emit(MembershipEvent{Kind: MembershipEventViewRestored})
	}
	// released is the provider's whole current set: a marker it no longer
	// holds (past its retention, MemoryConfig and consul.Config's
	// ReleasedRetention) is forgotten here too, so that the feed of a
	// long-running member does not keep every marker ever seen
	// (TestMemoryRegistryReleasedRetention).
	if len(f.released) > 0 {
		held := make(map[string]struct{}, len(released))
		for _, m := range released {
			held[m.Key()] = struct{}{}
		}
		for k := range f.released {
			if _, ok := held[k]; !ok {
				delete(f.released, k)
			}
		}
	}
	for _, m := range released {
		if _, ok := f.released[m.Key()]; ok {
			continue
		}
		m = cloneMember(m)
		f.released[m.Key()] = m
		f.emit(MembershipEvent{Kind: MembershipEventMemberReleased, Member: m})
	}
	if f.hasLatest && t.Epoch == f.latest.Epoch {
		return nil
	}
	f.latest = cloneTopology(t)
	f.hasLatest = true
	if f.joinEpoch > 0 && t.Epoch >= f.joinEpoch && !f.lease.Renewed.IsZero() {
		if !hasMemberKey(t, f.self.Key()) {
			f.revokeLocked(fmt.Errorf("%w: %s missing from the view at epoch %d", ErrLeaseRevoked, f.self.Key(), t.Epoch))
		}
	}
	f.logger.Debug("cluster: membership view", "epoch", t.Epoch, "members", len(t.Members))
	select {
	case <-f.snapshots:
	default:
	}
	// Cannot block: only producers send, they hold f.mu, and the slot was
	// just emptied.
	f.snapshots <- cloneTopology(t)
	return nil
}

// End ends the membership: a held lease becomes lost (its deadline stays),
// the view ends, MembershipEventEnded is emitted and both channels are closed.
// Idempotent.
func (f *MembershipFeed) End() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ended {
		return
	}
	if f.lease.Status == MembershipLeaseHeld {
		f.lease.Status = MembershipLeaseLost
		f.lease.Err = ErrMembershipEnded
		f.emit(MembershipEvent{Kind: MembershipEventLeaseLost, Err: ErrMembershipEnded})
	}
	f.view = ViewState{Status: ViewEnded, Since: f.now()}
	f.emit(MembershipEvent{Kind: MembershipEventEnded})
	f.ended = true
	close(f.snapshots)
	close(f.events)
}

// emit sends ev without blocking; callers hold f.mu.
func (f *MembershipFeed) emit(ev MembershipEvent) {
	ev.At = f.now()
	ev.Lease = f.lease
	select {
	case f.events <- ev:
	default:
		f.dropped.Add(1)
	}
}

func hasMemberKey(t Topology, key string) bool {
	for _, m := range t.Members {
		if m.Key() == key {
			return true
		}
	}
	return false
}

func cloneMember(m Member) Member {
	m.Kinds = slices.Clone(m.Kinds)
	return m
}

func cloneTopology(t Topology) Topology {
	ms := make([]Member, len(t.Members))
	for i, m := range t.Members {
		ms[i] = cloneMember(m)
	}
	t.Members = ms
	return t
}
