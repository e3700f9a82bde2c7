package testkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/scheduler"
)

// ErrRegistryCut: the member cannot reach the registry (PartitionRegistry,
// Pause) or is dead (Kill), so its Join fails.
var ErrRegistryCut = errors.New("testkit: registry unreachable")

// memberRegistry is one member's view of the shared MemoryRegistry: the
// fault injection between that member and the registry. While cut, the
// member's renewals fail, it gets no views and a Join (its rejoin after
// fencing) fails; a dead member's Join fails for good. It implements
// cluster.Provider, cluster.LeaseTimer and cluster.Evictor.
//
// It also gives the member the registry's answers as the member's process
// would see them: on its own clock (the slot's driftClock: the lease's
// renewal and deadline, the founding time, in local time) and late by the
// registry latency (SlowRegistry).
type memberRegistry struct {
	reg   *cluster.MemoryRegistry
	src   scheduler.Clock // the cluster's (true) clock: the registry's
	local *driftClock     // the member slot's clock
	// latency is SlowRegistry's delay (nanoseconds, on src).
	latency *atomic.Int64

	mu     sync.Mutex
	cuts   int  // PartitionRegistry and Pause each hold one
	dead   bool // killed: a dead process does not join
	keys   []string
	joined int
}

var (
	_ cluster.Retirer    = (*memberMembership)(nil)
	_ cluster.Provider   = (*memberRegistry)(nil)
	_ cluster.LeaseTimer = (*memberRegistry)(nil)
	_ cluster.Evictor    = (*memberRegistry)(nil)
)

// Join implements cluster.Provider. With a registry latency d the join
// reaches the registry d after the call (on the cluster's clock), or fails
// with ctx's error when ctx ends first.
func (r *memberRegistry) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if err := r.wait(ctx); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.dead:
		return nil, fmt.Errorf("%w: the member is dead", ErrRegistryCut)
	case r.cuts > 0:
		return nil, fmt.Errorf("%w: %s", ErrRegistryCut, self.Key())
	}
	m, err := r.reg.Join(ctx, self)
	if err != nil {
		return nil, err
	}
	r.keys = append(r.keys, self.Key())
	r.joined++
	return newMemberMembership(r, m), nil
}

// wait waits out the registry latency on the cluster's clock.
func (r *memberRegistry) wait(ctx context.Context) error {
	d := time.Duration(r.latency.Load())
	if d <= 0 {
		return ctx.Err()
	}
	done := make(chan struct{})
	stop := r.src.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return ctx.Err()
	case <-ctx.Done():
		stop()
		return ctx.Err()
	}
}

// LeaseTiming implements cluster.LeaseTimer.
func (r *memberRegistry) LeaseTiming() cluster.LeaseTiming { return r.reg.LeaseTiming() }

// Evict implements cluster.Evictor. With a registry latency d the
// eviction reaches the registry d late.
func (r *memberRegistry) Evict(ctx context.Context, m cluster.Member) error {
	if err := r.wait(ctx); err != nil {
		return err
	}
	return r.reg.Evict(ctx, m)
}

// memberMembership is a member's membership of the shared registry as its
// process sees it. Lease reports, in the member's local time, the
// renewals whose answers have reached it: a renewal sent at s (true time)
// is answered at s + d with a registry latency d, and until then the
// member's lease stands where the previous answered one put it (local(s')
// + F): a slow registry makes a member fence early, never late. Other
// lease states (lost, revoked, released) reach it at once. Founded is in
// local time too.
//
// Views reach it d late too: its forward goroutine passes each view the
// registry published on to Snapshots d after it took it (a goroutine hop
// after the publish), in order (latest wins, as on the registry's
// channel), and Latest reports the newest view passed on. With no latency
// and none held, a view passes at once and Latest is the registry's.
// Lease events and Released are not delayed (a view that drops the member
// revokes its lease at once).
type memberMembership struct {
	cluster.Membership
	r     *memberRegistry
	fence time.Duration
	renew time.Duration         // the registry's RenewInterval
	out   chan cluster.Topology // Snapshots: cap 1, latest wins
	wake  chan struct{}         // the view timer's: cap 1

	mu       sync.Mutex
	answered time.Time   // the newest renewal (send time, true) answered
	sent     []time.Time // renewals seen sent, not answered yet, oldest first
	last     time.Time   // the newest renewal seen
	held     []heldView  // views not passed on yet, oldest first
	passed   cluster.Topology
	hasPass  bool
	stopView func() bool // the view timer, while one is set
}

// heldView is a view a registry latency holds until due.
type heldView struct {
	due time.Time
	t   cluster.Topology
}

func newMemberMembership(r *memberRegistry, m cluster.Membership) *memberMembership {
	l := m.Lease()
	// The join's grant is its own answer.
	lt := r.reg.LeaseTiming()
	mm := &memberMembership{Membership: m, r: r, fence: lt.FencePeriod, renew: lt.RenewInterval, answered: l.Renewed, last: l.Renewed,
		out: make(chan cluster.Topology, 1), wake: make(chan struct{}, 1)}
	go mm.forward()
	r.src.AfterFunc(mm.renew/2, mm.sample)
	return mm
}

// sample records the registry's latest renewal of m, between two renewals
// (every RenewInterval from half one after the join), until the
// membership ends: Lease learns of a renewal only from what it reads, and
// a clock moved past several renewals between two Lease calls (a long
// virtual Advance, a placement actor's late tick) skipped the ones in
// between, so the member saw a lease up to 2R + d old or older instead of
// less than d + R (TestSlowRegistryAnswersRenewalsNotSeenByALeaseCall).
// The send times are the registry's own (a failed renewal moves nothing).
func (m *memberMembership) sample() {
	if m.Membership.ViewState().Status == cluster.ViewEnded {
		return
	}
	l := m.Membership.Lease()
	m.mu.Lock()
	m.noteLocked(l, m.r.src.Now())
	m.mu.Unlock()
	m.r.src.AfterFunc(m.renew, m.sample)
}

// noteLocked records l's renewal if it is new, and the renewals whose
// answers are due by now (true time). m.mu held.
func (m *memberMembership) noteLocked(l cluster.MembershipLease, now time.Time) {
	if l.Renewed.After(m.last) {
		m.last = l.Renewed
		m.sent = append(m.sent, l.Renewed)
	}
	cutoff := now.Add(-time.Duration(m.r.latency.Load()))
	k := 0
	for k < len(m.sent) && !m.sent[k].After(cutoff) {
		m.answered = m.sent[k]
		k++
	}
	m.sent = m.sent[k:]
}

// Snapshots implements cluster.Membership: the views as they reach the
// member.
func (m *memberMembership) Snapshots() <-chan cluster.Topology { return m.out }

// Latest implements cluster.Membership: the newest view that reached the
// member (the registry's own when none is held back).
func (m *memberMembership) Latest() (cluster.Topology, bool) {
	m.mu.Lock()
	if len(m.held) > 0 {
		t, ok := m.passed, m.hasPass
		m.mu.Unlock()
		return t, ok
	}
	m.mu.Unlock()
	return m.Membership.Latest()
}

// forward passes the registry's views on to out, each d late with a
// registry latency d, until the registry's channel closes (the membership
// ended); the views still held then are dropped.
func (m *memberMembership) forward() {
	in := m.Membership.Snapshots()
	for {
		select {
		case t, ok := <-in:
			if !ok {
				m.mu.Lock()
				m.held = nil
				if m.stopView != nil {
					m.stopView()
					m.stopView = nil
				}
				m.mu.Unlock()
				close(m.out)
				return
			}
			d := time.Duration(m.r.latency.Load())
			m.mu.Lock()
			if d <= 0 && len(m.held) == 0 {
				m.passLocked(t)
				m.mu.Unlock()
				continue
			}
			due := m.r.src.Now().Add(max(d, 0))
			if k := len(m.held); k > 0 && due.Before(m.held[k-1].due) {
				due = m.held[k-1].due
			}
			m.held = append(m.held, heldView{due: due, t: t})
			m.armLocked()
			m.mu.Unlock()
		case <-m.wake:
			m.mu.Lock()
			m.stopView = nil
			now := m.r.src.Now()
			k := 0
			for k < len(m.held) && (k == 0 || !m.held[k].due.After(now)) {
				m.passLocked(m.held[k].t)
				k++
			}
			m.held = m.held[k:]
			m.armLocked()
			m.mu.Unlock()
		}
	}
}

// passLocked hands t to the member (latest wins: an unread older view is
// replaced; only forward sends, so the send cannot block).
func (m *memberMembership) passLocked(t cluster.Topology) {
	m.passed, m.hasPass = t, true
	select {
	case <-m.out:
	default:
	}
	m.out <- t
}

// armLocked sets the view timer for the first held view, unless one is set.
func (m *memberMembership) armLocked() {
	if m.stopView != nil || len(m.held) == 0 {
		return
	}
	m.stopView = m.r.src.AfterFunc(m.held[0].due.Sub(m.r.src.Now()), func() {
		select {
		case m.wake <- struct{}{}:
		default:
		}
	})
}

// Lease implements cluster.Membership.
func (m *memberMembership) Lease() cluster.MembershipLease {
	l := m.Membership.Lease()
	m.mu.Lock()
	m.noteLocked(l, m.r.src.Now())
	answered := m.answered
	m.mu.Unlock()
	if answered.Equal(l.Renewed) && m.r.local.identity() {
		return l
	}
	switch l.Status {
	case cluster.MembershipLeaseHeld, cluster.MembershipLeaseLost:
		l.Renewed = m.r.local.localAt(answered)
		l.Deadline = l.Renewed.Add(m.fence)
	default:
		if !l.Renewed.IsZero() {
			l.Renewed = m.r.local.localAt(l.Renewed)
		}
		if !l.Deadline.IsZero() {
			l.Deadline = m.r.local.localAt(l.Deadline)
		}
	}
	return l
}

// Retire forwards cluster.Retirer to the registry's membership (embedding
// would hide it: the runtime detects it with a type assertion), d late
// with a registry latency d. A member cut off the registry fails as the
// registry's partition makes it fail; a dead member's never reaches it.
func (m *memberMembership) Retire(ctx context.Context) error {
	r, ok := m.Membership.(cluster.Retirer)
	if !ok {
		return fmt.Errorf("testkit: the registry's membership does not implement cluster.Retirer")
	}
	if err := m.r.wait(ctx); err != nil {
		return err
	}
	m.r.mu.Lock() // as kill, so no Retire lands after the member died
	defer m.r.mu.Unlock()
	if m.r.dead {
		return fmt.Errorf("%w: the member is dead", ErrRegistryCut)
	}
	return r.Retire(ctx)
}

// Founded is the optional method of the registry's membership (when this
// incarnation founded its cluster), in local time.
func (m *memberMembership) Founded() (time.Time, bool) {
	f, ok := m.Membership.(interface{ Founded() (time.Time, bool) })
	if !ok {
		return time.Time{}, false
	}
	at, ok := f.Founded()
	if !ok {
		return at, false
	}
	return m.r.local.localAt(at), true
}

// cut adds one cut; the first one partitions every incarnation of the
// member from the registry.
func (r *memberRegistry) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cuts++
	if r.cuts == 1 {
		for _, k := range r.keys {
			r.reg.Partition(k)
		}
	}
}

// heal removes one cut; the last one heals, unless the member is dead: Kill
// ends a Pause (its cut) while it shuts the member down, and a healed dead
// member's Leave would reach the registry, a graceful exit.
func (r *memberRegistry) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cuts == 0 {
		return
	}
	r.cuts--
	if r.cuts == 0 && !r.dead {
		for _, k := range r.keys {
			r.reg.Heal(k)
		}
	}
}

// kill cuts the member off for good: no renewals, no rejoin.
func (r *memberRegistry) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead = true
	for _, k := range r.keys {
		r.reg.Partition(k)
	}
}
