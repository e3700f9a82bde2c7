package remote

import (
	"errors"
	"fmt"
	"sync"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/watchhook"
)

// EndpointTerminated is published on the actor system's EventStream when a
// peer incarnation is considered gone: it stayed unreachable for
// Config.GiveUpAfter, or, having watched local processes over a connection
// it made, did not come back within GiveUpAfter of that connection's end
// (Reason wraps ErrPeerUnreachable), said goodbye
// (ErrPeerShutdown), was replaced by a new incarnation at its address
// (ErrPeerRestarted) or was blocked (ErrBlocked). By then every local watcher
// of its processes has been sent Terminated{Why: AddressTerminated}, pending
// remote spawns on it have failed, and every pending request to a process
// at its address has failed with an error wrapping actor.ErrDeadLetter and
// Reason; for a restart (ErrPeerRestarted), every one made before the last
// connection to the old incarnation closed (the later ones go to the new
// incarnation, lostMarks). An incarnation reported unreachable or blocked that connects
// again is told, by this node's first envelope on that connection
// (*WatchesDropped), that the watches across the link are gone.
type EndpointTerminated struct {
	Address string
	NodeID  string // the gone incarnation, when known
	Reason  error
}

// undelivered is the Node's Undelivered hook: every envelope that did not
// make it, in either direction, becomes a dead letter here.
func (r *Remote) undelivered(u Undelivered) {
	env := u.Envelope
	if u.Inbound {
		// The payload could not be decoded (unregistered type, bad bytes):
		// the Node has logged it and emitted EventUnknownType. A reply to
		// a future waiting here fails it now with the reason (the reply's
		// type not registered on this node, typically), as a reply the
		// other node could not encode does; before, the request waited
		// out its deadline and ended in a bare timeout
		// (TestNewuser9UndecodableReplyFailsTheRequest). The dead letter
		// answers a sender on another node.
		if actor.IsFutureID(env.Target.ID) && r.isLocal(env.Target.Address) {
			if p, ok := r.sys.Lookup(env.Target.ID); ok {
				if _, ok := p.(*actor.Future); ok {
					p.SendUser(r.pid(env.Target), &actor.DeadLetterResponse{Target: r.senderPID(env.Sender),
						Reason: fmt.Errorf("the reply from %s cannot be decoded here: %w", env.Sender.Address, u.Err)}, nil)
				}
			}
		}
		r.sys.DeadLetter(r.pid(env.Target), nil, r.senderPID(env.Sender), u.Err)
		return
	}
	msg := env.Message
	if code := deadLetterReason(u.Err); code != DeadLetterNoTarget && actor.IsFutureID(env.Target.ID) {
		if _, sys := msg.(SystemMessage); !sys {
			from := env.Sender
			if from.IsZero() || code == DeadLetterMalformed {
				// Malformed when sending: a field too long for the wire,
				// which may be the sender's ID.
				from = PIDRef{Address: r.Address()}
			}
			// The message, a reply to a future on the other node, can never
			// be encoded (its type is not registered here, its codec failed,
			// it does not fit in a frame): the future is told why now
			// instead of waiting out its deadline, and a cluster caller
			// does not retry (and run the grain's handler again).
			r.sendEnv(Envelope{Target: env.Target, Message: &DeadLetterResponse{Target: from, Reason: code}}, sendAnswer)
		}
	}
	switch m := msg.(type) {
	case *WatchRequest:
		r.watchUndelivered(m)
	case *SpawnRequest:
		r.spawns.fail(m.RequestID, u.Err)
	case *PoisonPillRequest:
		msg = &actor.PoisonPill{}
	}
	r.sys.DeadLetter(r.pid(env.Target), msg, r.pid(env.Sender), u.Err)
}

// watchUndelivered: a Watch that never left this node cannot be answered by
// the peer, so the watcher is told at once that the node is out of reach.
func (r *Remote) watchUndelivered(m *WatchRequest) {
	k := watchKey{watcher: r.normalize(m.Watcher), watchee: r.normalize(m.Watchee)}
	e, ok := r.watches.takeOutbound(k)
	if !ok {
		return // unwatched meanwhile, or already told
	}
	r.tellTerminated(e.watcher, e.watchee, actor.TerminatedAddressTerminated)
}

// tellTerminated sends Terminated{who, why} to the local watcher.
func (r *Remote) tellTerminated(watcher, who *actor.PID, why actor.TerminatedReason) {
	if p, ok := r.sys.Lookup(watcher.ID); ok {
		p.SendSystem(watcher, &actor.TerminatedSystem{Terminated: actor.Terminated{Who: who, Why: why}})
	}
}

// endWatchesAt ends every watch across the link to addr, as for a node
// that is gone: each local watcher of a process there gets
// Terminated{AddressTerminated} (and, with unwatchPeer, the peer, which
// lives on, is sent an UnwatchRequest for it), and local processes forget
// the watchers there (each is handed an update of the watch, which reads
// "not watched", unless one is queued already). It returns the outbound
// watches it ended and the number of inbound ones.
func (r *Remote) endWatchesAt(addr string, unwatchPeer bool) (out []watchEntry, in int) {
	out, in, post := r.watches.takeAddress(addr)
	for _, e := range out {
		r.tellTerminated(e.watcher, e.watchee, actor.TerminatedAddressTerminated)
		if unwatchPeer {
			r.send(e.watchee, &UnwatchRequest{Watcher: r.ref(e.watcher), Watchee: r.ref(e.watchee)}, nil, sendAnswer)
		}
	}
	for _, s := range post {
		if proc, ok := r.sys.Lookup(s.entry.watchee.ID); ok {
			watchhook.Post(proc, s.entry.watchee, s.entry.watcher, s)
		} else {
			s.Take() // gone: nothing holds the watcher; the entry leaves
		}
	}
	return out, in
}

// peerTerminated is the Node's PeerTerminated hook.
func (r *Remote) peerTerminated(p Peer, reason error) {
	out, in := r.endWatchesAt(p.Address, false)
	failed := r.spawns.failAddress(p.Address, reason)
	var requests int
	if mark, ok := r.lost.take(p.Address, p.NodeID); ok && errors.Is(reason, ErrPeerRestarted) {
		// Only what was made before its connection closed can have
		// reached the old incarnation (lostMarks).
		requests = r.sys.FailRequestsToBefore(p.Address, reason, mark)
	} else {
		requests = r.sys.FailRequestsTo(p.Address, reason)
	}
	r.log.Info("remote: endpoint terminated", "peer", p.String(), "reason", reason,
		"watchers_notified", len(out), "remote_watchers_dropped", in, "spawns_failed", failed, "requests_failed", requests)
	r.sys.EventStream().Publish(&EndpointTerminated{Address: p.Address, NodeID: p.NodeID, Reason: reason})
}

// event is the Node's Event hook: transport events go to the EventStream
// as *Event.
func (r *Remote) event(e Event) {
	switch e.Kind {
	case EventDisconnected:
		if e.Peer.NodeID != "" {
			r.lost.lost(e.Peer.Address, e.Peer.NodeID, r.sys.RequestMark())
		}
	case EventConnected:
		r.lost.connected(e.Peer.Address, e.Peer.NodeID)
	}
	r.downs.record(e)
	r.sys.EventStream().Publish(&e)
}

// onBlockEvent publishes BlockList changes on the EventStream as
// *BlockEvent. (The Node itself closes the blocked peers' connections and
// reports them terminated.)
func (r *Remote) onBlockEvent(ev BlockEvent) {
	verb := "unblocked"
	if ev.Blocked {
		verb = "blocked"
	}
	r.log.Info(fmt.Sprintf("remote: nodes %s", verb), "keys", ev.Keys)
	r.sys.EventStream().Publish(&ev)
}

// maxLinkDowns bounds the addresses linkDowns remembers: an address is
// forgotten only when a connection to it comes up.
const maxLinkDowns = 1024

// linkDowns remembers, per address, why this node's last attempt to
// connect to it failed (a failed dial, or a handshake this node began that
// either side refused), until a connection to it is up again: the cause a
// request to that address that timed out names (Host.SetTimeoutCause).
// A request to a node whose handshake refuses this one (another
// SystemName, a certificate) waits in the endpoint's queue until its
// deadline or GiveUpAfter; before, its timeout read "actor: timeout" and
// nothing else (newuser9; TestRemoteRequestTimeoutNamesTheRefusedHandshake).
// The requests are not failed at the refusal: still queued, they would be
// delivered if the peer were fixed in time, after their callers were told
// they were not (TestReview12RequestFailedAtRefusalIsNotDeliveredLater).
type linkDowns struct {
	mu sync.Mutex
	m  map[string]error
}

// record takes a transport event.
func (l *linkDowns) record(e Event) {
	if e.Peer.Address == "" {
		return
	}
	switch e.Kind {
	case EventConnected:
		l.mu.Lock()
		delete(l.m, e.Peer.Address)
		l.mu.Unlock()
	case EventDialFailed, EventHandshakeRefused:
		if e.Err == nil || e.Inbound || errors.Is(e.Err, ErrDuplicateConnection) {
			// A refused inbound handshake says nothing of this node's own
			// link, nor does the tie-break's refusal of a second
			// connection: one is up.
			return
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		if l.m == nil {
			l.m = make(map[string]error)
		}
		if _, ok := l.m[e.Peer.Address]; !ok && len(l.m) >= maxLinkDowns {
			for a := range l.m { // any one: the bound only keeps the map small
				delete(l.m, a)
				break
			}
		}
		l.m[e.Peer.Address] = e.Err
	}
}

// why returns the last failure to connect to address, nil when none is on
// record (Host.SetTimeoutCause).
func (l *linkDowns) why(address string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[address]
}
