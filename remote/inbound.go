package remote

import (
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/watchhook"
)

// deliver is the Node's Deliver hook: one inbound envelope, on the reader
// goroutine of its connection (so envelopes of one connection are handled
// in order). Everything here is a non-blocking hand-off to a mailbox, a
// future or the Node.
func (r *Remote) deliver(from Peer, env Envelope) {
	switch m := env.Message.(type) {
	case *SpawnRequest:
		r.handleSpawnRequest(from, env, m)
		return
	case *SpawnResponse:
		r.spawns.complete(r, from, m)
		return
	case *WatchesDropped:
		r.watchesDropped(from, m)
		return
	}
	if !r.isLocal(env.Target.Address) {
		r.sys.DeadLetter(r.pid(env.Target), env.Message, r.senderPID(env.Sender),
			fmt.Errorf("%w: %s sent %s to this node (%s)", ErrMisaddressed, from, env.Target, r.Address()))
		return
	}
	t, ok := r.targets.get(r.sys, env.Target)
	if !ok {
		r.targetNotFound(env, actor.NewPID(env.Target.Address, env.Target.ID))
		return
	}
	if n, ok := env.Message.(*TerminatedNotice); ok && n.Who.Address != from.Address {
		// Only the watched process's own node says it ended (this node
		// says so itself when that node is gone): a peer's notice about a
		// process elsewhere would make a watcher here act on a false end
		// (TestTerminatedNoticeAboutAnotherNodeRefused).
		r.log.Debug("remote: Terminated about another node's process refused", "peer", from.String(), "who", n.Who.String())
		return
	}
	if w, ok := env.Message.(*WatchRequest); ok && w.Watcher.Address != from.Address {
		// Only the watcher's own node asks to watch for it (the runtime's
		// Watch always names a local watcher). A watch for a watcher on a
		// third node would stay here, and in the watchee, until the
		// watchee stopped: the sender's departure ends only the watches of
		// its own address (retiredPeer), so a peer could leave ever more
		// behind (TestWatchRequestForAThirdNodesWatcherRefused). One for a
		// watcher on this node would put a watcher in the actor that no
		// bound counts (its Terminated is delivered here, never through
		// the watch table), and could complete a pending future here with
		// a Terminated (TestWatchRequestNamingALocalWatcherRefused).
		r.log.Debug("remote: Watch for a watcher not on the sender's node refused", "peer", from.String(), "watcher", w.Watcher.String())
		return
	}
	if u, ok := env.Message.(*UnwatchRequest); ok && u.Watcher.Address != from.Address {
		// Only the watcher's own node ends its watch (the runtime's
		// Unwatch, like its Watch, names a local watcher): a peer's
		// Unwatch for another node's watcher would end that watch here,
		// and its watcher would never hear of the watchee's stop
		// (TestUnwatchRequestForAnotherNodesWatcherRefused).
		r.log.Debug("remote: Unwatch for a watcher not on the sender's node refused", "peer", from.String(), "watcher", u.Watcher.String())
		return
	}
	switch env.Message.(type) {
	case *WatchRequest, *UnwatchRequest, *TerminatedNotice, *StopRequest, *PoisonPillRequest, *DeadLetterResponse:
		// A fresh PID: these may keep it (watch tables, Terminated).
		r.deliverControl(from, t.proc, env, actor.NewPID(env.Target.Address, env.Target.ID))
	default:
		r.post(from, t, env.Message, env.Header, env.Sender)
	}
}

// deliverInbound is deliver for an envelope as a connection's reader
// decoded it (dec, w: see Node.deliver), called by the Node directly
// instead of through the Deliver hook. A user message (one that is not a
// SystemMessage) to a local process joins the reader's run (an
// actor.UserRun on its stack, posted in one go by the end of the frame)
// without an Envelope being built: in the two-process one-way benchmark's
// peer, the hook call's line alone (the 88-byte Envelope copied by value
// for an indirect call) took 4 % of the process's CPU, and the mailbox
// post of each message (a ticket CAS and a status check) 8 %. Everything
// else takes deliver's path, after the run.
//
// The connection's last target (dec.target) serves the envelopes that
// follow to the same process, with string compares instead of the target
// cache's hash (3 % of the one-way peer's CPU); whether it still lives is
// checked at the start of each run. TestDeliverInboundTargetMemo and
// TestDeliverInboundRuns pin it.
func (r *Remote) deliverInbound(from Peer, dec *envelopeDecoder, w *wireEnvelope, msg any, run *actor.UserRun) {
	if w.serializer == SerializerSystem { // only SystemMessages decode with it
		run.Flush()
		r.deliver(from, w.envelope(msg))
		return
	}
	t := dec.target
	if t == nil || t.pid.ID != w.target.ID || t.pid.Address != w.target.Address || run.Len() == 0 && r.sys.ProcessStopped(t.proc) {
		run.Flush()
		var ok bool
		if !r.isLocal(w.target.Address) {
			r.deliver(from, w.envelope(msg))
			return
		}
		if t, ok = r.targets.get(r.sys, w.target); !ok {
			r.deliver(from, w.envelope(msg))
			return
		}
		// A future takes one answer: remembered, it stayed reachable with
		// that answer until the connection's next user message
		// (TestNewuser10AnsweredFutureNotKeptByInboundCache).
		if _, future := t.proc.(*actor.Future); future {
			dec.target = nil
		} else {
			dec.target = t
		}
	}
	if w.header != nil {
		msg = &actor.MessageEnvelope{Header: w.header, Message: msg}
	}
	run.Add(t.proc, t.pid, msg, r.senderPID(w.sender))
}

// post delivers an inbound user message to t that did not come through a
// connection's run (deliverInbound): no allocation but the message itself,
// refused beyond Config.MaxMailboxBacklog (backlogRefused). The cached
// target PID only tells the process who it is. A message that came with a
// header is delivered in an actor.MessageEnvelope.
func (r *Remote) post(from Peer, t *target, msg any, h actor.Header, sender PIDRef) {
	if h != nil {
		msg = &actor.MessageEnvelope{Header: h, Message: msg}
	}
	if !actor.SendUserBounded(t.proc, t.pid, msg, r.senderPID(sender), r.node.maxBacklog) {
		r.backlogRefused(from, t.pid, 1)
	}
}

// deliverControl delivers the remote system messages from from to p, the
// process of target. A *PoisonPillRequest puts a PoisonPill in the user
// queue, and is refused as the user messages are beyond
// Config.MaxMailboxBacklog: else a peer could queue any number of pills
// (a StopRequest is a system message, never refused).
func (r *Remote) deliverControl(from Peer, p actor.Process, env Envelope, target *actor.PID) {
	switch m := env.Message.(type) {
	case *WatchRequest:
		// Bound to the reply process: the watchee's Terminated goes to an
		// address the peer named (sendReply).
		watcher := r.replyPID(m.Watcher)
		if watcher == nil || r.isLocal(m.Watcher.Address) {
			// deliver refuses a watcher on this node: its Terminated would
			// be delivered here, and its entry would never leave the table
			// (TestWatchRequestNamingALocalWatcherLeavesNoEntry).
			return
		}
		// The entry leaves when the Terminated goes out through the remote
		// process, on Unwatch, or when the node is gone. The process is
		// handed an update of the pair's watch only when none is queued
		// and it does not have the watch already: a repeated Watch, or
		// Watches and Unwatches alternating while the actor is busy,
		// queue one system message at most, which reads the latest
		// request when the actor handles it
		// (TestRepeatedWatchAndUnwatchQueueNothing,
		// TestAlternatingWatchUnwatchQueuesOne).
		s, ok, first := r.watches.watchInbound(watchKey{watcher: r.normalize(m.Watcher), watchee: r.ref(target)}, watchEntry{watcher: watcher, watchee: target})
		if !ok {
			r.watchRefused(m.Watcher, target, first)
			return
		}
		if s != nil {
			watchhook.Post(p, target, s.entry.watcher, s)
		}
	case *UnwatchRequest:
		if m.Watcher.IsZero() {
			return
		}
		if s := r.watches.unwatchInbound(watchKey{watcher: r.normalize(m.Watcher), watchee: r.ref(target)}); s != nil {
			watchhook.Post(p, target, s.entry.watcher, s)
		}
	case *TerminatedNotice:
		e, ok := r.watches.takeOutbound(watchKey{watcher: r.ref(target), watchee: r.normalize(m.Who)})
		if !ok {
			// No watch of Who by target here: never made, unwatched, or
			// told already (the entry leaves with the first notice). The
			// watcher would ignore it; queued, it would wait in a busy
			// watcher's system queue, one per notice a peer sends
			// (TestTerminatedNoticeQueuesOnlyForAWatchHeld).
			return
		}
		if m.Why == TerminatedWatchRefused {
			r.refusedByPeer(e.watcher, e.watchee)
		}
		p.SendSystem(target, &actor.TerminatedSystem{Terminated: actor.Terminated{Who: e.watchee, Why: actorReason(m.Why)}})
	case *StopRequest:
		p.SendSystem(target, &actor.Stop{})
	case *PoisonPillRequest:
		if !actor.SendUserBounded(p, target, &actor.PoisonPill{}, r.senderPID(env.Sender), r.node.maxBacklog) {
			r.backlogRefused(from, target, 1)
		}
	case *DeadLetterResponse:
		// Only a waiting future is told; an actor is not (as locally).
		if _, ok := p.(*actor.Future); ok {
			dl := &actor.DeadLetterResponse{Target: r.pid(m.Target)}
			if err := m.Reason.Err(); err != nil {
				dl.Reason = fmt.Errorf("%w (reported by %s)", err, m.Target.Address)
			}
			p.SendUser(target, dl, nil)
		}
	}
}

// watchRefused answers a WatchRequest beyond Config.MaxWatchesPerPeer:
// the watch is not taken, and its watcher's node is told so, with a
// TerminatedNotice of reason TerminatedWatchRefused, rather than left to
// wait for a Terminated that would never come. first: the peer has just
// reached the bound (logged once until its watches fall to half of it).
func (r *Remote) watchRefused(watcher PIDRef, watchee *actor.PID, first bool) {
	r.node.stats.watchesRefused.Add(1)
	if first {
		r.log.Warn("remote: a peer's watches reached Config.MaxWatchesPerPeer; further watches from it are refused until some end",
			"peer", watcher.Address, "max", r.watches.maxIn)
	}
	r.sendEnv(Envelope{Target: watcher, Message: &TerminatedNotice{Who: r.ref(watchee), Why: TerminatedWatchRefused}}, sendAnswer)
}

// refusedByPeer handles a watch of this node's watcher that the watchee's
// node refused at its Config.MaxWatchesPerPeer (its outbound entry is
// gone; the watcher is told Terminated{AddressTerminated} by the caller):
// counted, logged (throttled), and the peer sent an UnwatchRequest, so
// that a Watch of the same pair sent again before the refusal arrived,
// and taken there, does not stay there while the watcher here believes
// the watch ended.
func (r *Remote) refusedByPeer(watcher, watchee *actor.PID) {
	r.node.stats.watchesRefusedByPeers.Add(1)
	r.send(watchee, &UnwatchRequest{Watcher: r.ref(watcher), Watchee: r.ref(watchee)}, nil, sendAnswer)
	if ok, held := r.refusedLog.allow(r.sys.Clock().Now()); ok {
		r.log.Warn("remote: a peer refused a watch: this node's watches there reached its MaxWatchesPerPeer; the watcher gets Terminated{AddressTerminated}",
			"peer", watchee.Address, "watcher", watcher.String(), "watchee", watchee.String(), "suppressed", held)
	}
}

// senderPID is pid for the sender of an inbound message: a cached PID when
// the sender is on another node.
func (r *Remote) senderPID(ref PIDRef) *actor.PID {
	if ref.IsZero() {
		return nil
	}
	if r.isLocal(ref.Address) {
		return actor.NewPID(ref.Address, ref.ID)
	}
	return r.senders.get(ref)
}

// targetNotFound handles an envelope for a process that does not exist here
// (never did, stopped, or a guardian: guardians are not reachable from other
// nodes). As locally: a user message is a dead letter, a Watch is answered
// with Terminated{NotFound}, other system messages are dropped. A sender on
// another node is told with a DeadLetterResponse, so that its request fails
// at once instead of timing out.
func (r *Remote) targetNotFound(env Envelope, target *actor.PID) {
	var reason error
	if actor.IsFutureID(target.ID) {
		switch env.Message.(type) {
		case *WatchRequest, *UnwatchRequest, *StopRequest:
			// Not answers: a watch of a requester whose request has
			// completed is legitimate, and is answered NotFound below
			// (TestReview7WatchOfCompletedFutureIsNoUnmatchedAnswer).
		default:
			reason = r.futureAnswerUnmatched(env, target)
		}
	}
	switch m := env.Message.(type) {
	case *WatchRequest:
		if !m.Watcher.IsZero() {
			r.sendEnv(Envelope{Target: m.Watcher, Message: &TerminatedNotice{Who: r.ref(target), Why: TerminatedNotFound}}, sendAnswer)
		}
	case *UnwatchRequest, *TerminatedNotice, *StopRequest, *DeadLetterResponse:
		r.log.Debug("remote: system message for a missing process dropped", "pid", target.String(), "type", fmt.Sprintf("%T", m))
	default:
		msg := env.Message
		if _, ok := msg.(*PoisonPillRequest); ok {
			msg = &actor.PoisonPill{}
		}
		if env.Header != nil {
			// With its header, as delivered: a Redirect (Host.SetRedirect)
			// that takes the message passes it on.
			msg = &actor.MessageEnvelope{Header: env.Header, Message: msg}
		}
		r.sys.DeadLetter(target, msg, r.senderPID(env.Sender), reason) // answers a sender on another node
	}
}

// futureAnswerUnmatched counts and logs (throttled) an answer from a peer
// to a future ID that names no pending future, and returns the dead
// letter's reason. Most are late (the request timed out, or failed when
// the peer was declared gone); a made-up ID lands here too, since a future
// ID ends in a random tag that only those the request went to have seen
// (actor/future_id.go): a peer that saw one future's ID cannot name
// another (TestForgedAnswerToFutureRefused).
func (r *Remote) futureAnswerUnmatched(env Envelope, target *actor.PID) error {
	r.node.stats.futureAnswersUnmatched.Add(1)
	if ok, held := r.unmatchedLog.allow(r.sys.Clock().Now()); ok {
		r.log.Info("remote: an answer from a peer to no pending future (late, or a made-up future ID) dropped",
			"future", target.String(), "sender", env.Sender.String(), "type", fmt.Sprintf("%T", env.Message), "suppressed", held)
	}
	return ErrNoSuchFuture
}
