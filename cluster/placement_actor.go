package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// Messages of the placement actor from its own member.
type (
	viewMsg struct {
		topo     Topology
		released []Member
		m        Membership
	}
	rejoinMsg struct{ m Membership }
	tickMsg   struct{}
	blockMsg  struct {
		member  Member
		unblock bool
	}
	shutdownMsg struct{ done chan struct{} }
	grainReady  struct{ pid *actor.PID }
	grainFailed struct {
		pid *actor.PID
		err error
	}
	passivateMsg   struct{ pid *actor.PID }
	remoteEndedMsg struct{}
)

// placementActor is the system actor that hosts this member's grains (V2.x,
// B3.x). It executes the decisions of its placementCore: it spawns grains
// as its children and watches them, answers activation requests, stops
// what a new view moves away and acknowledges the view when that is done,
// passivates idle grains, fences when its lease runs short, and takes part
// in the graceful shutdown.
type placementActor struct {
	c    *Cluster
	core *placementCore
	m    Membership

	// mu guards the writes to core.byPID, which a grain reads (under mu)
	// at its first message to find its activation; the placement actor
	// reads it without mu. activate holds mu from the spawn until the
	// activation knows its PID, so the grain never looks too early.
	mu          sync.Mutex
	waiting     map[*activation][]*actor.PID // requesters waiting for Started
	cancelTick  func() bool
	shutdown    chan struct{} // closed when the last grain stopped
	leaving     bool          // Shutdown began: ticks only stop overdue grains
	fenceEnding bool
	// settledEpoch is the epoch of the last ViewSettled published.
	settledEpoch uint64
	// reach is the reachability vote's state (reachability.go).
	reach reachState
}

func newPlacementActor(c *Cluster, self Member) *placementActor {
	return &placementActor{
		c:       c,
		core:    newPlacementCore(self, c.kinds, c.strategy, c.cfg.StopBudget, c.cfg.WaitOut),
		m:       c.membership.Load().m,
		waiting: map[*activation][]*actor.PID{},
	}
}

// activationOf returns the activation of the grain pid, or nil. Any
// goroutine.
func (p *placementActor) activationOf(pid *actor.PID) *activation {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.core.byPID[pid.ID]
}

func (p *placementActor) Receive(ctx actor.Context) {
	now := p.c.now()
	switch ctx.Message().(type) {
	case *viewMsg, *rejoinMsg, *tickMsg, *clusterpb.ViewAck, *actor.Terminated, *blockMsg,
		*remoteEndedMsg, *shutdownMsg:
		defer p.updateSettled(now) // what can settle or unsettle the view
	}
	switch m := ctx.Message().(type) {
	case *actor.Started:
		p.armTick(ctx)
	case *actor.Stopping:
		if p.cancelTick != nil {
			p.cancelTick()
		}
	case *viewMsg:
		if m.m != p.m {
			return // a view of an incarnation that ended
		}
		p.install(ctx, m.topo, m.released, now)
	case *tickMsg:
		p.tick(ctx, now)
		p.armTick(ctx)
	case *clusterpb.ActivationRequest:
		p.activate(ctx, m, now)
	case *grainReady:
		p.onReady(ctx, m.pid, now)
	case *grainFailed:
		p.onFailed(ctx, m.pid, m.err, now)
	case *actor.Terminated:
		p.onTerminated(ctx, m.Who, now)
	case *clusterpb.ViewAck:
		p.recordReport(m.MemberKey, m.Unreachable, now)
		if m.Vouches {
			p.core.vouched(m.MemberKey, m.Epoch, now)
		} else {
			p.core.ack(m.MemberKey, m.Epoch, now)
		}
	case *clusterpb.ActivationTerminated:
		id := Identity{Kind: m.Kind, ID: m.Id}
		p.c.flights.terminated(id, m.PidAddress, m.PidId)
		p.c.dropCachedNoWait(id, m.PidId)
		p.core.observed(FencingToken{Epoch: m.TokenEpoch, Seq: m.TokenSeq})
		p.c.sys.EventStream().Publish(&ActivationTerminated{
			Identity: id, Member: m.MemberKey, PID: actor.NewPID(m.PidAddress, m.PidId),
			Token: FencingToken{Epoch: m.TokenEpoch, Seq: m.TokenSeq}, At: now,
		})
	case *passivateMsg:
		if a := p.core.passivate(m.pid, now); a != nil {
			// As for an idle grain (tick): callers here stop sending to
			// it, so what they send next waits for the next activation.
			p.c.dropCachedNoWait(a.id, "")
			p.stopGrain(ctx, a, false)
		}
	case *blockMsg:
		if m.unblock {
			for _, a := range p.core.unblock(m.member.Key(), now) {
				p.handOver(ctx, a, now)
			}
			return
		}
		// Seed 002's order: leases revoked, PidCache invalidated, event.
		moved := p.core.block(m.member.Key(), now)
		invalidated := p.c.invalidateMember(m.member.Key(), m.member)
		p.c.sys.EventStream().Publish(&BlockListApplied{Member: m.member.Key(), Revoked: len(moved),
			Invalidated: invalidated, At: now})
		for _, a := range moved {
			p.handOver(ctx, a, now)
		}
	default:
		p.c.relayed(ctx)
	case *clusterpb.ReachProbe:
		// Nothing to do: it made remote connect (vote probes suspended members).
	case *clusterpb.BlockNotice:
		// Block runs onBlockEvent on this goroutine: when the member is in
		// the caller-side view, that marks it blocked and queues a
		// blockMsg, which reports the update. When it is not (the
		// eviction reached this member's view before the notice did), no
		// blockMsg follows: nothing moves, the cache is still swept and
		// the update reported here (V4.4). The caller-side view is the one
		// to ask: the placement actor's own view may still hold the member
		// while its next view waits in this mailbox, and then neither path
		// reported the block.
		p.c.remote.BlockList().Block(m.Address)
		if !p.c.isBlockedMember(m.MemberKey) {
			p.c.sys.EventStream().Publish(&BlockListApplied{Member: m.MemberKey,
				Invalidated: p.c.invalidateMember(m.MemberKey, Member{ID: m.MemberId, Address: m.Address}), At: now})
		}
	case *rejoinMsg:
		p.m = m.m
		p.core.rejoin(m.m.Self())
		p.fenceEnding = false
		if t, ok := m.m.Latest(); ok {
			p.install(ctx, t, m.m.Released(), now)
		}
		if p.c.remoteGone.Load() {
			// The remote node ended after the rejoin's last look
			// (remoteEndedMsg may have come first, while the old
			// incarnation was fenced already): the new incarnation is
			// fenced for good too. remoteGone is set before
			// remoteEndedMsg is sent, so every order ends here or there
			// (TestClusterRemoteEndedDuringRejoinStaysFenced).
			p.remoteEnded(ctx, now)
		}
	case *remoteEndedMsg:
		p.remoteEnded(ctx, now)
	case *shutdownMsg:
		p.shutdown, p.leaving = m.done, true
		for _, a := range p.core.beginShutdown(now) {
			p.c.dropCachedNoWait(a.id, "")
			p.stopGrain(ctx, a, false)
		}
		p.maybeShutdownDone()
	}
}

// foundedAt is when m's incarnation founded its cluster, or zero: the
// optional Founded method (see Provider).
func foundedAt(m Membership) time.Time {
	if f, ok := m.(interface{ Founded() (time.Time, bool) }); ok {
		if at, ok := f.Founded(); ok {
			return at
		}
	}
	return time.Time{}
}

// setLease gives the core this incarnation's lease and publishes the time
// past which grains refuse messages: the lease deadline minus the stop
// budget, or at once when fenced.
func (p *placementActor) setLease() {
	l := p.m.Lease()
	p.core.setLease(l)
	switch {
	case p.core.fenced:
		p.c.fenceAt.Store(1)
	case l.Deadline.IsZero():
		p.c.fenceAt.Store(0)
	default:
		p.c.fenceAt.Store(l.Deadline.Add(-p.c.cfg.StopBudget).UnixNano())
	}
}

func (p *placementActor) armTick(ctx actor.Context) {
	// One tick timer at a time: every tickMsg re-arms, the ticks the
	// membership asks for (a lease lost or revoked) too, and without the
	// cancel each of those added a timer chain for the member's life
	// (TestClusterLeaseEventsKeepOneTickTimer). A timer that fired already
	// has its tickMsg queued, which re-arms in its turn.
	if p.cancelTick != nil {
		p.cancelTick()
	}
	d := p.c.cfg.TickInterval
	// Fence on time: the next tick comes no later than the fence time the
	// last look at the lease gave (its deadline − S), whatever
	// TickInterval is. The timing relations count from there; a tick
	// after it stopped the grains up to TickInterval late, and with
	// TickInterval > S a member evicted while cut off from the registry
	// still ran them when the others took over, W after the eviction
	// (TestClusterFencesOnTimeWhateverTheTick). That tick looks at the
	// lease afresh: it fences, or the renewed lease moves the fence time.
	// The wait is the quantity that tick's check compares (Deadline − S −
	// now, as MembershipLease.Valid reads it), so a tick that did not fence
	// never arms the next one in the past.
	if l := p.core.lease; p.core.hasLease && !l.Deadline.IsZero() && !p.leaving && !p.core.fenced {
		d = min(d, max(l.Deadline.Sub(p.c.now())-p.c.cfg.StopBudget, 0))
	}
	self := ctx.Self()
	root := p.c.root
	p.cancelTick = p.c.sys.Clock().AfterFunc(d, func() { root.Send(self, &tickMsg{}) })
}

func (p *placementActor) install(ctx actor.Context, t Topology, released []Member, now time.Time) {
	p.setLease()
	first := !p.core.hasView
	if first {
		p.core.founded = foundedAt(p.m)
	}
	if !p.core.hasView || (t.Epoch >= p.core.view.Epoch && t.Hash != p.core.view.Hash) {
		// installView rebuilds the ring (a view it neither refuses as
		// stale nor only moves the epoch of): build it without the
		// members remote's block list names (Cluster.remoteBlocked).
		// Marked for another view, a key would make a blockMsg for it
		// that is still queued skip its rebuild (placementCore.block).
		for _, k := range p.c.remoteBlocked(t) {
			p.core.blocked[k] = struct{}{} // kept by installView while k is in t
		}
	}
	ch, err := p.core.installView(t, released, now)
	if err != nil {
		p.c.log.Warn("cluster: view refused", "err", err)
		return
	}
	p.reachView(t.Members, now) // a view refused as stale changes nothing of the vote
	if first {
		p.evictBlocked(t)
	}
	if !ch.changed {
		p.sendAck(ctx)
		return
	}
	for _, a := range ch.moved {
		p.handOver(ctx, a, now)
	}
	p.sendAck(ctx)
	if !p.core.fenced && !p.leaving && p.core.leaseOK(now) {
		p.c.setStatus(StatusReady)
	}
}

// evictBlocked evicts the members of this incarnation's first view that
// are blocked here (a blocked member's new incarnation, registered again at
// the address remote refuses). Views before the first are unknown, so the
// barrier counts every member of it as a possible earlier owner (rule 3);
// a blocked one is never heard, and only its departure clears it. Evicted,
// it fences and is gone from the view, and the barrier clears W later;
// left registered, this member would activate nothing of its kinds for as
// long as it stays (TestClusterMemberRejoiningBesideBlockedMemberActivates).
// Only a first view evicts, so a blocked member rejoins once per member
// that joins, not in a loop.
//
// Only members remote's block list names: a member this one alone
// suspends (reachability.go) is one no vote found unreachable, and only
// the vote evicts for a suspension
// (TestReview15RejoinDoesNotEvictAMemberOnlyThisOneSuspends).
func (p *placementActor) evictBlocked(t Topology) {
	bl := p.c.remote.BlockList()
	for _, m := range t.Members {
		if _, blocked := p.core.blocked[m.Key()]; blocked && m.Key() != p.core.selfKey && bl.IsBlocked(m.ID, m.Address) {
			p.c.log.Info("cluster: evicting a blocked member of the first view", "member", m.Key())
			p.c.evict(m)
		}
	}
}

func (p *placementActor) handOver(ctx actor.Context, a *activation, now time.Time) {
	to := ""
	if o, err := p.core.ring.Owner(a.id); err == nil {
		to = o.Key()
	}
	p.c.sys.EventStream().Publish(&OwnershipChanged{Identity: a.id, From: p.core.selfKey, To: to, Epoch: p.core.view.Epoch, At: now})
	p.c.dropCachedNoWait(a.id, "")
	p.stopGrain(ctx, a, false)
}

// stopGrain poisons (or, when urgent, stops) a grain. A grain that has not
// started yet is stopped when it reports ready or failed.
func (p *placementActor) stopGrain(ctx actor.Context, a *activation, urgent bool) {
	if a.pid == nil {
		return
	}
	if urgent {
		ctx.Stop(a.pid)
		return
	}
	ctx.Poison(a.pid)
}

// updateSettled publishes whether the view has settled (Cluster.Settled)
// and, when it turns settled or is settled at a new epoch, the ViewSettled
// event.
func (p *placementActor) updateSettled(now time.Time) {
	settled := !p.leaving && p.core.settled(now) && p.c.Status() == StatusReady
	if !settled {
		p.c.settledOK.Store(false)
		return
	}
	p.c.settledHash.Store(p.core.view.Hash)
	if was := p.c.settledOK.Swap(true); !was || p.core.view.Epoch != p.settledEpoch {
		// Each time it turns true (a view that settles again, say after an
		// unblock, at the same epoch: wall-time AwaitConverged waits for
		// the event), and when it stays true into a new view.
		p.settledEpoch = p.core.view.Epoch
		p.c.sys.EventStream().Publish(&ViewSettled{Epoch: p.settledEpoch, At: now})
	}
}

// sendAck tells every member that this one runs nothing it does not own in
// its current view, once that holds.
func (p *placementActor) sendAck(ctx actor.Context) {
	if !p.core.canAck() {
		return
	}
	now := p.c.now()
	ack := &clusterpb.ViewAck{MemberKey: p.core.selfKey, Epoch: p.core.view.Epoch, TopologyHash: p.core.view.Hash,
		Vouches: p.core.vouches(now), Unreachable: p.myReport(now)}
	for _, m := range p.core.view.Members {
		if p.core.acksTo(m.Key()) {
			ctx.Send(actor.NewPID(m.Address, placementName), ack)
		}
	}
}

func (p *placementActor) tick(ctx actor.Context, now time.Time) {
	if p.leaving {
		// The membership is being left (or was): its lease is no guide
		// any more, and nothing is fenced or started again.
		for _, a := range p.core.overdue(now) {
			p.stopGrain(ctx, a, true)
		}
		return
	}
	p.setLease()
	passivate, fence, stop := p.core.tick(now)
	for _, a := range passivate {
		p.c.dropCachedNoWait(a.id, "")
		p.stopGrain(ctx, a, false)
	}
	if fence {
		p.fenced(ctx, stop, p.m.Lease().Err, now)
		p.c.log.Warn("cluster: fenced: membership lease not valid past the stop budget", "member", p.core.selfKey, "grains", len(stop))
	}
	for _, a := range p.core.overdue(now) {
		p.stopGrain(ctx, a, true)
	}
	if p.core.fenced {
		p.endFencedMembership()
		return
	}
	p.sendAck(ctx)
	p.vote(ctx, now)
}

// fenced stops the grains a fence marked stopping (stop) and reports the
// fence.
func (p *placementActor) fenced(ctx actor.Context, stop []*activation, why error, now time.Time) {
	p.c.fenceAt.Store(1)
	p.c.setStatus(StatusFenced)
	for _, a := range stop {
		p.c.dropCachedNoWait(a.id, "")
		p.stopGrain(ctx, a, true)
	}
	p.c.metrics.fenced()
	p.c.sys.EventStream().Publish(&Fenced{Member: p.core.selfKey, Stopped: len(stop), Err: why, At: now})
}

// remoteEnded fences this member for good: its remote node ended while the
// cluster ran (Node.Close, as a test that simulates a crash calls it), so
// no other member can reach its grains any more, and its lease must not
// keep them here. Its grains stop at once, and once they have, the
// membership is stopped as a crash ends it (the others wait its lease out,
// then W, and take its grains over); no rejoin follows
// (TestClusterRemoteEndedEndsMembership). Before, the member went on
// renewing its lease with its grains out of everyone's reach.
func (p *placementActor) remoteEnded(ctx actor.Context, now time.Time) {
	if p.leaving {
		return
	}
	if !p.core.fenced {
		stop := p.core.fence(now)
		p.fenced(ctx, stop, errRemoteEnded, now)
	}
	p.c.log.Error("cluster: this member's remote node ended while the cluster runs: fenced for good, its membership ends without a rejoin",
		"member", p.core.selfKey, "grains", p.core.activeCount())
	p.endFencedMembership()
}

// endFencedMembership ends a fenced incarnation once its grains stopped, so
// the runtime rejoins as a new one (unless its remote node ended). The
// membership is stopped at once (the rejoin waits for it to end, and the
// provider may be out of reach), then released (Cluster.retireFenced:
// released marker and deregistration, retried until the provider answers),
// so the other members drop the old incarnation from their views and take
// over without waiting W for it; before, it stayed in every view, owning
// its share of the identities, until the provider expired it
// (TestClusterServesSoonAfterRegistryOutage,
// TestClusterFencedIncarnationsReleasedAfterRegistryCut).
//
// A member whose remote node ended is not released: that is how a crashed
// process is modelled (remote's Node.Close, offered to tests that simulate
// one), and a crash writes no marker: the others wait its lease out, then
// W, and meanwhile it is an owner nobody can reach (requests to its
// identities time out: TestClusterRemoteEndedEndsMembership,
// TestClusterRetriesExhausted). Releasing it would be safe (its grains
// have stopped too), but the runtime would then model a graceful leave
// where a crash was meant. remoteGone is set before remoteEndedMsg is
// sent, so the check below sees it on that path.
func (p *placementActor) endFencedMembership() {
	if p.leaving || p.fenceEnding || p.core.activeCount() > 0 {
		return
	}
	p.fenceEnding = true
	m := p.m
	release := !p.c.remoteGone.Load() && p.c.beginRetire(m)
	p.c.goTracked(func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.c.cfg.RequestTimeout)
		_ = m.Stop(ctx)
		cancel()
		p.c.lingerMembership(m)
		if release {
			p.c.retireFenced(m)
		}
	})
}

func (p *placementActor) activate(ctx actor.Context, req *clusterpb.ActivationRequest, now time.Time) {
	id := Identity{Kind: req.Kind, ID: req.Id}
	if err := id.Validate(); err != nil {
		ctx.Respond(&clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_FAILED, Error: err.Error(),
			Kind: req.Kind, Id: req.Id})
		return
	}
	if req.TopologyHash != p.core.view.Hash && req.Epoch > p.core.view.Epoch {
		// The requester is ahead: take the provider's newest view first.
		if t, ok := p.m.Latest(); ok && t.Epoch > p.core.view.Epoch {
			p.install(ctx, t, p.m.Released(), now)
		}
	}
	p.setLease()
	a, existing, refusal := p.core.activate(id, req.Epoch, req.TopologyHash, now)
	if refusal != nil {
		if errors.Is(refusal.err, ErrNoSuchKind) {
			p.c.metrics.activationFailed(id.Kind)
			p.c.sys.EventStream().Publish(&ActivationFailed{Identity: id, Member: p.core.selfKey, Err: refusal.err, At: now})
		}
		ctx.Respond(p.refusalResponse(id, refusal))
		return
	}
	if existing {
		if a.stoppedAt.Load() != nil {
			// The grain handled Stopped (it stopped itself, or is
			// passivating) and this actor has not had its Terminated yet:
			// its PID leads nowhere. The requester retries and finds the
			// next activation, instead of sending to the dead grain (a
			// request would fail as a dead letter and retry anyway; a
			// forwarded Send would use up its forwards).
			ctx.Respond(p.refusalResponse(id, &activationRefusal{err: fmt.Errorf("%w: %s is stopping", errBusy, id)}))
			return
		}
		if a.ready {
			ctx.Respond(p.okResponse(a))
		} else {
			p.waiting[a] = append(p.waiting[a], ctx.Sender())
		}
		return
	}
	p.mu.Lock()
	pid, err := spawnGrain(ctx, a.kind.props, id.String())
	if err == nil {
		p.core.started(a, pid)
	}
	p.mu.Unlock()
	if err != nil {
		p.core.failed(a)
		p.c.metrics.activationFailed(id.Kind)
		p.c.sys.EventStream().Publish(&ActivationFailed{Identity: id, Member: p.core.selfKey, Err: err, At: now})
		ctx.Respond(&clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_FAILED, Error: err.Error(),
			Kind: id.Kind, Id: id.ID})
		return
	}
	p.c.activeChanged(a.kind, 1)
	ctx.Watch(pid)
	p.waiting[a] = append(p.waiting[a], ctx.Sender())
}

// spawnGrain spawns a grain as a child of the placement actor, with p.mu
// held. The runtime makes a panic in the kind's producer the grain's
// failure on its first turn, which fails the activation as a panic in its
// Started handler does (V2.2). A panic anywhere else in the spawn is
// returned as an activation failure here instead of failing the placement
// actor with p.mu held (every grain's first message would wait on it for
// good).
func spawnGrain(ctx actor.Context, props *actor.Props, name string) (pid *actor.PID, err error) {
	defer func() {
		if r := recover(); r != nil {
			pid, err = nil, fmt.Errorf("%w: grain producer panicked: %v", ErrActivationFailed, r)
		}
	}()
	return ctx.SpawnNamed(props, name)
}

func (p *placementActor) okResponse(a *activation) *clusterpb.ActivationResponse {
	return &clusterpb.ActivationResponse{
		Status:     clusterpb.ActivationStatus_ACTIVATION_STATUS_OK,
		PidAddress: a.pid.Address, PidId: a.pid.ID,
		TokenEpoch: a.token.Epoch, TokenSeq: a.token.Seq,
		Epoch: p.core.view.Epoch, TopologyHash: p.core.view.Hash,
		Kind: a.id.Kind, Id: a.id.ID,
	}
}

func (p *placementActor) refusalResponse(id Identity, r *activationRefusal) *clusterpb.ActivationResponse {
	resp := &clusterpb.ActivationResponse{Error: r.err.Error(), Epoch: p.core.view.Epoch, TopologyHash: p.core.view.Hash,
		RetryAfterNanos: int64(r.retryAfter), Kind: id.Kind, Id: id.ID}
	switch {
	case errors.Is(r.err, ErrShuttingDown):
		resp.Status = clusterpb.ActivationStatus_ACTIVATION_STATUS_SHUTTING_DOWN
	case errors.Is(r.err, errFenced):
		resp.Status = clusterpb.ActivationStatus_ACTIVATION_STATUS_FENCED
	case errors.Is(r.err, ErrNoSuchKind):
		resp.Status = clusterpb.ActivationStatus_ACTIVATION_STATUS_NO_SUCH_KIND
	case errors.Is(r.err, errBusy):
		resp.Status = clusterpb.ActivationStatus_ACTIVATION_STATUS_BUSY
	default:
		resp.Status = clusterpb.ActivationStatus_ACTIVATION_STATUS_OWNERSHIP_CHANGED
	}
	return resp
}

func (p *placementActor) onReady(ctx actor.Context, pid *actor.PID, now time.Time) {
	a := p.core.byPID[pid.ID]
	if a == nil || a.ready {
		// A grain restarted after a panic reports its Started again: the
		// same activation, already announced and counted.
		return
	}
	a.ready = true
	// Counted and published before the requesters hear of it: a caller
	// whose request the grain answered finds it in the metrics.
	p.c.metrics.activated(a.id.Kind)
	// At is when the lease was granted: the grain may have run from then on.
	p.c.sys.EventStream().Publish(&ActivationStarted{Identity: a.id, Member: p.core.selfKey, PID: pid, Token: a.token, At: time.Unix(0, a.granted)})
	resp := p.okResponse(a)
	for _, w := range p.waiting[a] {
		if w != nil {
			ctx.Send(w, resp)
		}
	}
	delete(p.waiting, a)
	if a.state == actStopping {
		p.stopGrain(ctx, a, a.reason == stopFence)
	}
}

func (p *placementActor) onFailed(ctx actor.Context, pid *actor.PID, err error, now time.Time) {
	a := p.core.byPID[pid.ID]
	if a == nil {
		return
	}
	// A ready activation fails here when its grain, restarted after a
	// panic, failed its Started handler (a typed grain's Activated error):
	// nobody waits for it any more, but it is stopped all the same, so the
	// next request activates the identity afresh instead of reaching a
	// grain that cannot serve.
	resp := &clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_FAILED, Error: err.Error(),
		Kind: a.id.Kind, Id: a.id.ID}
	for _, w := range p.waiting[a] {
		if w != nil {
			ctx.Send(w, resp)
		}
	}
	delete(p.waiting, a)
	p.c.metrics.activationFailed(a.id.Kind)
	p.c.sys.EventStream().Publish(&ActivationFailed{Identity: a.id, Member: p.core.selfKey, Err: err, At: now})
	// The lease is released when the stopped grain's Terminated arrives.
	ctx.Stop(pid)
}

func (p *placementActor) onTerminated(ctx actor.Context, pid *actor.PID, now time.Time) {
	p.mu.Lock()
	a := p.core.terminated(pid)
	p.mu.Unlock()
	if a == nil {
		return
	}
	endedHandover := a.state == actStopping && a.reason == stopHandover
	p.c.activeChanged(a.kind, -1)
	wasReady := a.ready
	if ws := p.waiting[a]; len(ws) > 0 {
		resp := &clusterpb.ActivationResponse{Status: clusterpb.ActivationStatus_ACTIVATION_STATUS_BUSY, Error: "activation stopped before it started",
			Kind: a.id.Kind, Id: a.id.ID}
		for _, w := range ws {
			if w != nil {
				ctx.Send(w, resp)
			}
		}
		delete(p.waiting, a)
	}
	p.c.dropCachedNoWait(a.id, pid.ID)
	if wasReady {
		p.c.metrics.deactivated(a.id.Kind)
		// At is when the grain handled its last message (Stopped), not when
		// this actor got to its Terminated, which may be later under load.
		at := now
		if s := a.stoppedAt.Load(); s != nil {
			at = *s
		}
		p.c.sys.EventStream().Publish(&ActivationTerminated{Identity: a.id, Member: p.core.selfKey, PID: pid, Token: a.token, At: at})
		msg := &clusterpb.ActivationTerminated{Kind: a.id.Kind, Id: a.id.ID, MemberKey: p.core.selfKey,
			PidAddress: pid.Address, PidId: pid.ID, TokenEpoch: a.token.Epoch, TokenSeq: a.token.Seq}
		for _, m := range p.core.view.Members {
			if m.Key() != p.core.selfKey {
				ctx.Send(actor.NewPID(m.Address, placementName), msg)
			}
		}
	}
	if endedHandover && p.core.handover == 0 {
		// The last grain a view moved away has stopped: acknowledge the
		// view now rather than at the next tick. Other terminations leave
		// the acknowledgement as the last one sent (the ticks repeat it),
		// so they do not broadcast it (TestClusterTerminationSendsNoViewAck).
		p.sendAck(ctx)
	}
	if p.core.fenced {
		p.endFencedMembership()
	}
	p.maybeShutdownDone()
}

func (p *placementActor) maybeShutdownDone() {
	if p.shutdown != nil && p.core.activeCount() == 0 {
		close(p.shutdown)
		p.shutdown = nil
	}
}

// grainSupervisor supervises the grains, children of the placement actor:
// a grain that fails before its Started handler completed is an activation
// failure (V2.2, B3.2) and is stopped; a later failure restarts it, as the
// default strategy would.
type grainSupervisor struct{ pa *placementActor }

var defaultGrainStrategy = actor.DefaultStrategy()

func (s grainSupervisor) HandleFailure(sup actor.Supervisor, f actor.Failure) {
	if a := s.pa.core.byPID[f.Child.ID]; a != nil {
		if !a.startedOK() && !a.ready {
			err := fmt.Errorf("%w: %s: %v", ErrActivationFailed, a.id, f.Err)
			s.pa.c.root.Send(s.pa.c.placement, &grainFailed{pid: f.Child, err: err})
			sup.StopChildren(f.Child)
			return
		}
	}
	defaultGrainStrategy.HandleFailure(sup, f)
}
