package cluster

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// placementCore is the placement actor's decision logic as a pure state
// machine: views, lease state, acknowledgements, activation requests,
// terminations and the passing of time go in; decisions come out. It starts
// nothing, reads no clock and sends nothing, so every rule below has a
// table test in virtual time. The placement actor owns it and executes its
// decisions (spawn, stop, respond, publish, acknowledge).
//
// Single activation rests on four rules, all checked before a lease is
// granted (docs/cluster.md):
//
//  1. Lease: this member's membership lease is valid for at least the stop
//     budget S beyond now, so it can stop what it starts before any other
//     member may consider it gone.
//  2. View: the request was computed under this member's view and the
//     rendezvous ring of that view picks this member.
//  3. Handover barrier: every member that owned the identity in a view
//     since the barrier last cleared has acknowledged a view at least as new
//     as the one that started the barrier (it runs nothing it does not own
//     any more), left with a released marker, or been gone from the view for
//     the wait-out W. Views before this core's first one are unknown, so
//     every member of that first view hosting the identity's kind counts as
//     an earlier owner; a core whose first view has no other such member
//     cannot learn of members that left just before it joined, and grants
//     nothing for W after that view.
//
// A member acknowledges a view only when it runs nothing it does not own in
// it, is waiting out no departed member, and has been in the cluster for W
// (it cannot vouch for departures before it came): so a member that joins
// and waits for the acknowledgements of those in its first view also waits
// out the members that left before it came, even when they fenced late
// (a pause of up to P after their removal from the view).
//  4. Lease table: no local lease of the identity is still held. The
//     table (acts) holds one activation per held lease, from the grant to
//     the grain's termination; an activation's fencing token is (view
//     epoch, a sequence number that only grows), so tokens grow per
//     identity across the cluster's history.
type placementCore struct {
	self     Member
	selfKey  string
	kinds    map[string]*Kind
	strategy HashStrategy
	stop     time.Duration // S
	waitOut  time.Duration // W

	hasView bool
	view    Topology
	ring    Ring
	blocked map[string]struct{}
	history []Ring // rings of the views since the barrier last cleared
	// unknown are the members of this core's first view while the barrier
	// it started holds: views before it are unknown, so any of them that
	// hosts a kind may still run any identity of that kind.
	unknown []Member
	// blindUntil is the core's first view + W, zero at a provider's first
	// view ever (epoch 1) or once another member vouched (see vouches):
	// before it the core grants nothing and vouches for nothing.
	blindUntil time.Time
	// founded is when this incarnation founded its cluster (its
	// Membership's Founded), zero when it did not: see installView.
	founded    time.Time
	firstEpoch uint64
	barrier    uint64 // epoch of the view that started the barrier
	acked      map[string]uint64
	// early holds the acknowledgements of members this core does not
	// know yet (see hold), at most maxEarlyAcks of them.
	early    map[string]earlyAck
	goneAt   map[string]time.Time
	released map[string]struct{}

	acts     *localActivations
	byPID    map[string]*activation
	seq      uint64 // the last token sequence number minted
	stopping int    // activations in acts whose state is actStopping

	lease    MembershipLease
	hasLease bool
	fenced   bool
	leaving  bool
	handover int // activations stopping because a view moved them away
}

// maxBarrierHistory bounds the views kept while a barrier waits; past it the
// oldest pending member blocks every identity until it is cleared (safe,
// less available).
const maxBarrierHistory = 64

type actState uint8

const (
	actActive actState = iota + 1
	actStopping
)

type stopReason uint8

const (
	stopPassivate stopReason = iota + 1
	stopHandover
	stopFence
	stopShutdown
	stopRequested
)

// activation is one local grain activation and its lease: it is held
// from the grant while the activation is in the core's table (Active while
// state is actActive, Releasing until deadline while actStopping). One
// exists per activated grain, so it keeps only what the placement needs:
// the token (whose Seq is also the lease ID), a pointer to the shared
// kind, and flags. marks is written by the grain and by the resolutions
// that publish or withdraw its route, pending by the grain and by its
// deferred replies (on any goroutine); the other fields belong to the
// placement actor.
type activation struct {
	id       Identity
	pid      *actor.PID
	kind     *Kind // shared by every activation of the kind
	token    FencingToken
	deadline int64         // stop deadline while stopping (Unix nanoseconds)
	last     int64         // last time seen active by a tick (Unix nanoseconds)
	marks    atomic.Uint32 // markTouched, markStarted: set by the grain
	pending  atomic.Int32  // deferred replies and continuations the grain waits for (beginWait)
	state    actState
	reason   stopReason
	forced   bool // stopped forcibly after its stop deadline
	ready    bool // the grain reported its Started handler returned
	// granted is when the lease was granted (Unix nanoseconds); stoppedAt
	// is set by the grain when it handled Stopped, its last message.
	granted   int64
	stoppedAt atomic.Pointer[time.Time]
}

// Marks a grain sets on its activation.
const (
	markTouched  uint32 = 1 << iota // a message since the last tick
	markStarted                     // the Started handler returned
	markRoutable                    // callers on this member may send to pid (localActivations.route)
	markStopping                    // set by the placement when the activation begins to stop; never cleared
)

// touch marks the activation active since the last tick (L4). It writes
// only when the mark is not set yet, so a busy grain does not keep writing
// the shared word.
func (a *activation) touch() {
	if a.marks.Load()&markTouched == 0 {
		a.marks.Or(markTouched)
	}
}

// untouch clears the activity mark and reports whether it was set. It
// writes only when the mark is set, so a tick over idle grains only reads.
func (a *activation) untouch() bool {
	return a.marks.Load()&markTouched != 0 && a.marks.And(^markTouched)&markTouched != 0
}

// beginWait records one piece of work the grain waits for (a deferred
// reply it has yet to send, a continuation yet to run): until the matching
// endWait the activation is not idle.
func (a *activation) beginWait() { a.pending.Add(1) }

// endWait ends a piece of work beginWait recorded. It marks the activation
// active first, so its idle clock starts when its last pending work ends,
// and a tick that finds no pending work also finds the mark (tick).
func (a *activation) endWait() {
	a.touch()
	a.pending.Add(-1)
}

// startedOK reports whether the grain's Started handler returned.
func (a *activation) startedOK() bool { return a.marks.Load()&markStarted != 0 }

func newPlacementCore(self Member, kinds []Kind, strategy HashStrategy, stopBudget, waitOut time.Duration) *placementCore {
	c := &placementCore{
		self:     self,
		selfKey:  self.Key(),
		kinds:    make(map[string]*Kind, len(kinds)),
		strategy: strategy,
		stop:     stopBudget,
		waitOut:  waitOut,
		blocked:  map[string]struct{}{},
		acked:    map[string]uint64{},
		early:    map[string]earlyAck{},
		goneAt:   map[string]time.Time{},
		released: map[string]struct{}{},
		acts:     newLocalActivations(),
		byPID:    map[string]*activation{},
	}
	for i := range kinds {
		k := kinds[i]
		c.kinds[k.name] = &k
	}
	return c
}

// viewChange is what installing a view did.
type viewChange struct {
	changed bool
	joined  []Member
	left    []Member
	// moved are the local activations the view gives to another member:
	// the actor stops them (handover) and acknowledges the view once they
	// have terminated.
	moved []*activation
}

// setLease records this member's membership lease.
func (c *placementCore) setLease(l MembershipLease) { c.lease, c.hasLease = l, true }

// leaseOK reports whether the lease guarantees membership until now + S.
func (c *placementCore) leaseOK(now time.Time) bool {
	return c.hasLease && !c.fenced && c.lease.Valid(now.Add(c.stop))
}

// installView makes t the current view (V1.1, B2.1). A view with the same
// hash only moves the epoch (B2.2: owners are reused). A view with another
// hash starts (or extends) the handover barrier with the previous ring,
// rebuilds the ring, and returns the local activations it moves away, each
// marked stopping with deadline now + S. released are the members known to
// have left with a released marker.
func (c *placementCore) installView(t Topology, released []Member, now time.Time) (viewChange, error) {
	for _, m := range released {
		c.released[m.Key()] = struct{}{}
	}
	if c.hasView && t.Epoch < c.view.Epoch {
		return viewChange{}, fmt.Errorf("%w: epoch %d < current %d", ErrStaleView, t.Epoch, c.view.Epoch)
	}
	if c.hasView && t.Hash == c.view.Hash {
		c.view.Epoch = t.Epoch
		return viewChange{}, nil
	}
	var ch viewChange
	ch.changed = true
	if c.hasView {
		ch.joined, ch.left = Diff(c.view, t)
		c.pushHistory(c.ring)
		c.barrier = t.Epoch
		for _, m := range ch.left {
			if _, ok := c.goneAt[m.Key()]; !ok {
				c.goneAt[m.Key()] = now
			}
		}
	} else {
		c.unknown, c.barrier = slices.Clone(t.Members), t.Epoch
		c.firstEpoch = t.Epoch
		if t.Epoch > 1 && !c.foundedJustNow(now) {
			// Epoch 1 is a provider's first view ever: nobody can have
			// left before it.
			c.blindUntil = now.Add(c.waitOut)
		}
	}
	present := make(map[string]struct{}, len(t.Members))
	for _, m := range t.Members {
		present[m.Key()] = struct{}{}
		// A member that is back is no longer gone: should it leave
		// again, the wait-out counts from then.
		delete(c.goneAt, m.Key())
	}
	for key := range c.blocked {
		if _, ok := present[key]; !ok {
			delete(c.blocked, key)
		}
	}
	c.view, c.hasView = t, true
	c.rebuild()
	ch.moved = c.moveAway(now)
	c.clearBarrier(now)
	c.replayEarly(now)
	return ch, nil
}

func (c *placementCore) rebuild() {
	c.ring = c.strategy.Build(withoutBlocked(c.view, c.blocked, Member.Key))
}

// moveAway marks stopping every active activation whose owner is no longer
// this member and returns them. An activation that is already stopping for
// another reason (passivation, shutdown) is not returned, as its grain is
// already being stopped, but it becomes a handover too: it still runs until
// it terminates, so it holds the view acknowledgement (canAck) like the
// others. A fenced core acknowledges nothing, so fence stops stay as they are.
func (c *placementCore) moveAway(now time.Time) []*activation {
	var moved []*activation
	c.acts.each(func(a *activation) {
		if a.state == actStopping && (a.reason == stopHandover || a.reason == stopFence) {
			return
		}
		if o, err := c.ring.Owner(a.id); err == nil && o.Key() == c.selfKey {
			return
		}
		if a.state == actStopping {
			c.beginStop(a, stopHandover, now)
			return
		}
		c.beginStop(a, stopHandover, now)
		moved = append(moved, a)
	})
	return moved
}

func (c *placementCore) beginStop(a *activation, why stopReason, now time.Time) {
	if a.state == actStopping {
		if why == stopHandover && a.reason != stopHandover {
			a.reason = why
			c.handover++
		}
		return
	}
	a.state, a.reason, a.deadline = actStopping, why, now.Add(c.stop).UnixNano()
	a.marks.Or(markStopping)
	c.stopping++
	if why == stopHandover {
		c.handover++
	}
}

// block leaves the member key out of owner selection until a view without it
// arrives (V1.4). It returns the local activations that move away.
func (c *placementCore) block(key string, now time.Time) []*activation {
	if _, ok := c.blocked[key]; ok || !c.hasView {
		c.blocked[key] = struct{}{}
		return nil
	}
	c.blocked[key] = struct{}{}
	c.pushHistory(c.ring)
	c.barrier = c.view.Epoch
	c.rebuild()
	return c.moveAway(now)
}

// unblock makes the member key eligible again and returns the local
// activations that move to it. They move without a new view epoch, so they
// are handed over as for a block: the view is acknowledged (and the member,
// blocked until now, hears of it) only once they have terminated, and the
// unblocked member's barrier waits for that acknowledgement. Removing a
// member from the ring moves only the identities it owned, so putting it
// back moves identities only to it: no other member's barrier is needed.
func (c *placementCore) unblock(key string, now time.Time) []*activation {
	if _, ok := c.blocked[key]; !ok {
		return nil
	}
	delete(c.blocked, key)
	if !c.hasView {
		return nil
	}
	c.rebuild()
	return c.moveAway(now)
}

// observed records the fencing token of an activation of another member
// (its ActivationTerminated broadcast): a lease granted here later in the
// same epoch gets a greater sequence number. Within one epoch an identity
// moves between members only by an unblock, whose handover the broadcast
// precedes (it is sent before the view acknowledgement that lets this
// member grant); across epochs the epoch orders the tokens already.
func (c *placementCore) observed(tok FencingToken) {
	if c.hasView && tok.Epoch >= c.view.Epoch && tok.Seq > c.seq && tok.Seq <= maxObservedSeq {
		c.seq = tok.Seq
	}
}

// maxObservedSeq bounds the sequence observed taken from another member's
// broadcast: no member grants 2^62 activations in an epoch, and a larger
// one (a peer's bug, or a hostile peer) would make this core's next
// tokens wrap around to below every earlier one, which fencing storage
// then refuses (TestPlacementCoreObservedSeqBounded).
const maxObservedSeq = 1 << 62

// pushHistory records the ring of a view the barrier must account for. Past
// maxBarrierHistory rings, the ring's members join unknown instead: every
// identity of a kind they host then waits for them (safe, less precise).
func (c *placementCore) pushHistory(r Ring) {
	if len(c.history) < maxBarrierHistory {
		c.history = append(c.history, r)
		return
	}
	for _, m := range ringMembers(r) {
		if !slices.ContainsFunc(c.unknown, func(u Member) bool { return u.Key() == m.Key() }) {
			c.unknown = append(c.unknown, m)
		}
	}
}

// known reports whether member key is in the view or in the barrier's
// history: acknowledgements of other keys are ignored, so a peer cannot grow
// the core's state with made-up member keys.
func (c *placementCore) known(key string) bool {
	has := func(ms []Member) bool {
		return slices.ContainsFunc(ms, func(m Member) bool { return m.Key() == key })
	}
	if (c.hasView && has(c.view.Members)) || has(c.unknown) {
		return true
	}
	for _, r := range c.history {
		if has(ringMembers(r)) {
			return true
		}
	}
	return false
}

// ack records that member key acknowledged epoch.
func (c *placementCore) ack(key string, epoch uint64, now time.Time) {
	c.acknowledged(key, epoch, false, now)
}

// acknowledged records member key's acknowledgement of epoch, which
// vouches for departures or not (vouches, vouched): applied when the core
// knows key, held (hold) when it does not or when it acknowledges a view
// newer than the core's.
func (c *placementCore) acknowledged(key string, epoch uint64, vouches bool, now time.Time) {
	known := c.known(key)
	if !known || epoch > c.view.Epoch {
		c.hold(key, epoch, vouches)
	}
	if known {
		c.apply(key, epoch, vouches, now)
	}
}

// apply records the acknowledgement of a known member; one that vouches
// for departures, of the core's first view or a later one, ends the blind
// period.
func (c *placementCore) apply(key string, epoch uint64, vouches bool, now time.Time) {
	if epoch > c.acked[key] {
		c.acked[key] = epoch
	}
	if vouches && epoch >= c.firstEpoch {
		c.blindUntil = time.Time{}
	}
	c.clearBarrier(now)
}

// settled reports whether the core's view has settled: it acknowledges
// the view itself (canAck), is not blind, and no member of the view is
// pending, so the barrier waits for nobody still in the view. Members that
// left are not counted: the identities they owned wait for their release
// or W whatever this says.
func (c *placementCore) settled(now time.Time) bool {
	if !c.canAck() || c.leaving || now.Before(c.blindUntil) {
		return false
	}
	for _, m := range c.view.Members {
		if c.pending(m.Key(), now) {
			return false
		}
	}
	if len(c.history) >= maxBarrierHistory {
		// Past the bound a pending member of the history holds back
		// every identity (barrierWait), not only those it owned.
		for _, r := range c.history {
			for _, m := range ringMembers(r) {
				if c.pending(m.Key(), now) {
					return false
				}
			}
		}
	}
	return true
}

// earlyAck is an acknowledgement held until its sender is known.
type earlyAck struct {
	epoch   uint64
	vouches bool
}

// maxEarlyAcks bounds the acknowledgements held from members not known yet:
// past it they are dropped, and the sender's next tick repeats them.
const maxEarlyAcks = 64

// hold keeps the acknowledgement of a member this core does not know yet
// (no view yet, or a view without it) until a view names it, and one of a
// view newer than the core's until it installs that view; rejoin keeps
// them for the new incarnation, as an acknowledgement names its sender
// only, and the view that adds the new incarnation may be acknowledged to
// the old one (TestReview9RejoinedCoreKeepsEarlyVouches). Each member
// acknowledges a view as soon as it installs it, so a member that joins
// gets the acknowledgements of the others for the view that adds it,
// often before it has its own first view (or the others, before the view
// with the joiner); dropped, they came again only with the senders' next
// tick, and a joiner granted nothing until then: in virtual time, where
// nothing moves the clock while a test waits for a call, never
// (TestVirtualClusterBlockingFirstCalls). An acknowledgement states what
// held at its sender for its epoch, so it means the same applied late.
// One per key (the newest epoch), a bounded number: made-up keys cannot
// grow the core's state.
func (c *placementCore) hold(key string, epoch uint64, vouches bool) {
	e, ok := c.early[key]
	if !ok && len(c.early) >= maxEarlyAcks {
		return
	}
	if !ok || epoch > e.epoch || (epoch == e.epoch && vouches) {
		c.early[key] = earlyAck{epoch: epoch, vouches: vouches}
	}
}

// replayEarly applies the held acknowledgements of the members the new
// view made known, keeping those of views newer than it, and forgets those
// of members it does not name: a joiner's acknowledgement comes before the
// view with the joiner, not two views before, and a key that no view names
// (made up) is gone at the next view. What it forgets the sender's next
// tick repeats if it matters.
func (c *placementCore) replayEarly(now time.Time) {
	for key, e := range c.early {
		switch {
		case c.known(key):
			if e.epoch <= c.view.Epoch {
				delete(c.early, key)
			}
			c.apply(key, e.epoch, e.vouches, now)
		default:
			delete(c.early, key)
		}
	}
}

// pending reports whether member key still blocks the barrier.
func (c *placementCore) pending(key string, now time.Time) bool {
	if key == c.selfKey {
		return false
	}
	// A blocked member cannot be heard any more and may still run what it
	// owned: only its release or its absence for W clears it, never an
	// acknowledgement it sent before the block.
	if _, blocked := c.blocked[key]; !blocked && c.acked[key] >= c.barrier {
		return false
	}
	if _, ok := c.released[key]; ok {
		return false
	}
	if at, ok := c.goneAt[key]; ok && !now.Before(at.Add(c.waitOut)) {
		return false
	}
	return true
}

// clearBarrier drops the history once no member of it is pending.
func (c *placementCore) clearBarrier(now time.Time) {
	if len(c.history) == 0 && len(c.unknown) == 0 {
		return
	}
	for _, m := range c.unknown {
		if c.pending(m.Key(), now) {
			return
		}
	}
	for _, r := range c.history {
		for _, m := range ringMembers(r) {
			if c.pending(m.Key(), now) {
				return
			}
		}
	}
	c.history, c.unknown = nil, nil
	c.prune()
}

// prune forgets what the core knows of members absent from the view once
// no barrier needs it: acknowledgements, departures and released markers.
func (c *placementCore) prune() {
	present := make(map[string]struct{}, len(c.view.Members))
	for _, m := range c.view.Members {
		present[m.Key()] = struct{}{}
	}
	for k := range c.goneAt {
		if _, ok := present[k]; !ok {
			delete(c.goneAt, k)
		}
	}
	for k := range c.acked {
		if _, ok := present[k]; !ok {
			delete(c.acked, k)
		}
	}
	for k := range c.released {
		if _, ok := present[k]; !ok {
			delete(c.released, k)
		}
	}
}

func ringMembers(r Ring) []Member {
	if rr, ok := r.(*rendezvousRing); ok {
		return rr.topo.Members
	}
	if m, ok := r.(interface{ Members() []Member }); ok {
		return m.Members()
	}
	return nil
}

// barrierWait returns nil when every earlier owner of id since the barrier
// last cleared has handed it over (rule 3), else errBusy with what the
// barrier waits for. The reason is in the text because it reaches a
// caller whose deadline ends first (ErrTimeout wraps it): a member that
// joins an existing cluster grants nothing for W unless vouched for, and
// without the reason that wait reads as an unexplained "activation busy".
func (c *placementCore) barrierWait(id Identity, now time.Time) error {
	if now.Before(c.blindUntil) {
		return fmt.Errorf("%w: %s: %s joined a cluster that existed before it and waits out members that may have left just before (until a member that has been in the cluster for W vouches for them, or for %v more; W = %v)",
			errBusy, id, c.self.ID, c.blindUntil.Sub(now), c.waitOut)
	}
	for _, m := range c.unknown {
		if m.HasKind(id.Kind) && c.pending(m.Key(), now) {
			return c.barrierErr(id, m.Key())
		}
	}
	if len(c.history) >= maxBarrierHistory {
		for _, r := range c.history {
			for _, m := range ringMembers(r) {
				if c.pending(m.Key(), now) {
					return c.barrierErr(id, m.Key())
				}
			}
		}
		return nil
	}
	for _, r := range c.history {
		o, err := r.Owner(id)
		if err != nil {
			continue
		}
		if c.pending(o.Key(), now) {
			return c.barrierErr(id, o.Key())
		}
	}
	return nil
}

func (c *placementCore) barrierErr(id Identity, member string) error {
	return fmt.Errorf("%w: %s: handover barrier: waiting for member %s, which may still run it, to acknowledge the current view, leave with a released marker or be gone for W (%v)",
		errBusy, id, member, c.waitOut)
}

// canAck reports whether this member may acknowledge its current view: it
// has a view, is not fenced, and every activation the view moved away has
// terminated.
func (c *placementCore) canAck() bool {
	return c.hasView && !c.fenced && c.handover == 0
}

// acksTo reports whether the view acknowledgement goes to the member with
// key: every other member of the view but those blocked here. Remote
// refuses a blocked member's traffic, but an unblock lets it through before
// the placement actor has handled the unblock (its blockMsg is queued): the
// member would take an acknowledgement of a view in which, on this member,
// it owns nothing, and activate what this member still runs and has not
// handed over yet (unblock).
func (c *placementCore) acksTo(key string) bool {
	if key == c.selfKey {
		return false
	}
	_, blocked := c.blocked[key]
	return !blocked
}

// foundedJustNow reports whether this core's first view, at now, comes
// within W/2 of the founding of its cluster by this incarnation (founded).
// Then, as at epoch 1, nobody can have activated anything before it, so
// nobody can have left still running grains: every other member
// registered after the founding, so it is blind (grants nothing) until W
// after its own first view, or until a member vouches for it, and the
// first to vouch can only be this one, once it has its first view. W/2
// leaves room for clocks that run at different rates (ρ is a hundredth).
// Without it a cluster whose provider never numbers a view 1 (Consul's
// epochs are its index) waited W in every member before its first
// activation (TestConsulFreshClusterActivatesWithoutWaitOut).
func (c *placementCore) foundedJustNow(now time.Time) bool {
	return !c.founded.IsZero() && now.Before(c.founded.Add(c.waitOut/2))
}

// vouches reports whether this member's acknowledgement also vouches for
// departures: it has been in the cluster for W (or was vouched for itself)
// and waits out no member that left its view without a released marker. A
// member that joins needs one such acknowledgement (or W of its own) before
// it grants anything: members that left before it came, and may still be
// stopping their grains (fencing up to P late), are unknown to it.
func (c *placementCore) vouches(now time.Time) bool {
	if !c.canAck() || now.Before(c.blindUntil) {
		return false
	}
	for k, at := range c.goneAt {
		if _, rel := c.released[k]; !rel && now.Before(at.Add(c.waitOut)) {
			return false // still waiting out a member that left
		}
	}
	return true
}

// vouched records an acknowledgement of epoch from member key that vouches
// for departures (see vouches): at or after this core's first view, it ends
// the core's blind period.
func (c *placementCore) vouched(key string, epoch uint64, now time.Time) {
	c.acknowledged(key, epoch, true, now)
}

// activationRefusal is a refused activation request.
type activationRefusal struct {
	err        error // one of the cluster sentinels
	retryAfter time.Duration
}

func (r *activationRefusal) Error() string { return r.err.Error() }
func (r *activationRefusal) Unwrap() error { return r.err }

// errBusy: a lease of the identity is held (stopping) or the handover
// barrier has not cleared.
var errBusy = errors.New("cluster: activation busy")

// errFenced: the owner's membership lease is not valid long enough.
var errFenced = errors.New("cluster: member fenced")

// errMisdirectedReply: an activation response named another identity than
// the one asked for (retried).
var errMisdirectedReply = errors.New("cluster: activation reply for another identity")

// activate decides an activation request for id made under view (epoch,
// hash). It returns the live activation (existing true), a new lease for
// the actor to spawn under (then call started or failed), or a refusal.
func (c *placementCore) activate(id Identity, epoch, hash uint64, now time.Time) (a *activation, existing bool, refusal *activationRefusal) {
	switch {
	case c.leaving:
		return nil, false, &activationRefusal{err: ErrShuttingDown}
	case !c.leaseOK(now):
		return nil, false, &activationRefusal{err: errFenced, retryAfter: c.stop}
	case !c.hasView:
		return nil, false, &activationRefusal{err: ErrOwnershipChanged}
	}
	kind, ok := c.kinds[id.Kind]
	if !ok {
		return nil, false, &activationRefusal{err: fmt.Errorf("%w: %q is not hosted by %s", ErrNoSuchKind, id.Kind, c.self.ID)}
	}
	if hash != c.view.Hash {
		return nil, false, &activationRefusal{err: fmt.Errorf("%w: request view %d/%016x, owner view %d/%016x", ErrOwnershipChanged, epoch, hash, c.view.Epoch, c.view.Hash)}
	}
	owner, err := c.ring.Owner(id)
	if err != nil || owner.Key() != c.selfKey {
		return nil, false, &activationRefusal{err: fmt.Errorf("%w: %s is not the owner of %s", ErrOwnershipChanged, c.self.ID, id)}
	}
	if cur := c.acts.get(id); cur != nil {
		if cur.state == actActive {
			return cur, true, nil
		}
		return nil, false, &activationRefusal{err: fmt.Errorf("%w: %s: its previous activation here is still stopping", errBusy, id),
			retryAfter: max(time.Duration(cur.deadline-now.UnixNano()), 0)}
	}
	if err := c.barrierWait(id, now); err != nil {
		return nil, false, &activationRefusal{err: err, retryAfter: c.stop}
	}
	c.seq++
	a = &activation{id: id, kind: kind, token: FencingToken{Epoch: c.view.Epoch, Seq: c.seq},
		state: actActive, last: now.UnixNano(), granted: now.UnixNano()}
	c.acts.put(a)
	return a, false, nil
}

// rejoin makes the core that of self, the new incarnation this member
// joined as after its membership ended (fenced, revoked): it has no view
// and no lease until the new membership gives them, and it starts as a
// member that joins does (installView's first view: every member of that
// view an earlier owner, blind for W unless vouched for). What the core
// knew of the barrier of the old incarnation's views goes: those views
// are not before the first one any more, so nothing would ever clear the
// members it held that are gone from the new view (no view of the new
// incarnation drops them, so none is waited out) nor the old incarnation
// itself (no longer self, and it acknowledges nothing): every identity
// they owned was refused as busy for as long as the incarnation lived
// (TestPlacementCoreRejoinForgetsTheOldBarrier). The sequence number is
// kept (tokens grow), as are the blocked members (remote's block list
// belongs to the process; installView prunes the absent ones). The fenced
// incarnation ended only once all its activations had terminated, so
// there are none.
func (c *placementCore) rejoin(self Member) {
	c.self, c.selfKey = self, self.Key()
	c.hasView, c.hasLease, c.fenced = false, false, false
	c.history, c.unknown = nil, nil
	c.blindUntil, c.founded, c.firstEpoch, c.barrier = time.Time{}, time.Time{}, 0, 0
	clear(c.acked) // c.early stays: see hold
	clear(c.goneAt)
	clear(c.released)
}

// started records the PID of a granted activation.
func (c *placementCore) started(a *activation, pid *actor.PID) {
	c.acts.setPID(a, pid)
	c.byPID[pid.ID] = a
}

// failed forgets a granted activation that did not start and releases its
// lease (V2.2, B3.2).
func (c *placementCore) failed(a *activation) {
	c.forget(a)
	if a.pid != nil {
		delete(c.byPID, a.pid.ID)
	}
}

// terminated forgets the activation whose grain stopped and releases its
// lease (V2.3, B3.3). It returns nil for a PID it does not know, and for
// one that only names a grain's ID: the actor package reports a child's
// end with the very PID its spawn returned (started recorded it), so a
// Terminated built elsewhere (sent to the placement actor by code of the
// process) releases nothing; before, it emptied the lease table of a grain
// still running, and a fenced member then released its incarnation beside
// it (TestClusterForgedTerminatedDoesNotReleaseFencedIncarnationReview10).
func (c *placementCore) terminated(pid *actor.PID) *activation {
	a := c.byPID[pid.ID]
	if a == nil || a.pid != pid {
		return nil
	}
	delete(c.byPID, pid.ID)
	c.forget(a)
	if a.state == actStopping && a.reason == stopHandover {
		c.handover--
	}
	return a
}

// tick is the passing of time: it returns the activations to passivate
// (idle for their kind's timeout, L4: no message and no pending work, see
// beginWait) and whether the member must fence
// now (its lease is no longer valid until now + S); fencing marks every
// activation stopping and returns them in stop.
// fence marks this member fenced and every activation stopping with
// deadline now + S, and returns them (to stop at once).
func (c *placementCore) fence(now time.Time) (stop []*activation) {
	c.fenced = true
	c.acts.each(func(a *activation) {
		if a.state == actStopping && a.reason == stopHandover {
			c.handover--
		}
		if a.state != actStopping {
			c.stopping++
		}
		a.marks.Or(markStopping)
		a.state, a.reason = actStopping, stopFence
		a.deadline = now.Add(c.stop).UnixNano()
		stop = append(stop, a)
	})
	c.handover = 0
	return stop
}

func (c *placementCore) tick(now time.Time) (passivate []*activation, fence bool, stop []*activation) {
	c.clearBarrier(now)
	if !c.fenced && c.hasLease && !c.lease.Valid(now.Add(c.stop)) {
		return nil, true, c.fence(now)
	}
	c.acts.each(func(a *activation) {
		if a.state != actActive || a.kind.idle <= 0 {
			return
		}
		if a.untouch() {
			a.last = now.UnixNano()
			return
		}
		if time.Duration(now.UnixNano()-a.last) >= a.kind.idle {
			// Read only for an activation past its idle timeout, so a tick
			// over active grains reads one word each. Pending first, then
			// the mark again: endWait touches before it decrements, so a
			// grain whose last pending work ended after the untouch above
			// is seen touched here.
			if a.pending.Load() > 0 || a.untouch() {
				a.last = now.UnixNano()
				return
			}
			c.beginStop(a, stopPassivate, now)
			passivate = append(passivate, a)
		}
	})
	return passivate, false, nil
}

// forget removes a from the lease table.
func (c *placementCore) forget(a *activation) {
	c.acts.remove(a)
	if a.state == actStopping {
		c.stopping--
	}
}

// passivate marks the activation of pid stopping at the grain's own request.
func (c *placementCore) passivate(pid *actor.PID, now time.Time) *activation {
	a := c.byPID[pid.ID]
	if a == nil || a.state != actActive {
		return nil
	}
	c.beginStop(a, stopRequested, now)
	return a
}

// beginShutdown refuses new activations and marks every activation stopping
// (V2.5, B3.4). It returns them.
func (c *placementCore) beginShutdown(now time.Time) []*activation {
	c.leaving = true
	var out []*activation
	c.acts.each(func(a *activation) {
		c.beginStop(a, stopShutdown, now)
		out = append(out, a)
	})
	return out
}

// overdue returns the stopping activations past their stop deadline that
// were not stopped forcibly yet, and marks them: the actor stops them at
// once (the stop budget S is enforced).
func (c *placementCore) overdue(now time.Time) []*activation {
	if c.stopping == 0 {
		return nil // the common tick: nothing to look for
	}
	var out []*activation
	c.acts.each(func(a *activation) {
		if a.state == actStopping && !a.forced && a.pid != nil && now.UnixNano() > a.deadline {
			a.forced = true
			out = append(out, a)
		}
	})
	return out
}

// activeCount returns the number of held leases (the virtual-actor gauge).
func (c *placementCore) activeCount() int { return c.acts.len() }
