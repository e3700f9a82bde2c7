package remote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// errEndpointGone: the endpoint terminated between lookup and use; the
// caller looks it up again (a new one is created).
var errEndpointGone = errors.New("remote: endpoint terminated")

// endpoint is the link to one peer address: a bounded queue, the current
// connection, and one goroutine (run) that connects lazily, writes batches,
// sends heartbeats, reconnects with backoff and gives up.
//
// Simultaneous dial tie-break: when both nodes open a connection to each
// other at once, the one opened by the node with the lower node ID wins.
// The lower node refuses the inbound connection while its own outbound one
// is being dialed; the higher node adopts the inbound one and drops its own
// dial. Both sides apply the same rule, so they agree. Any inbound
// handshake is refused while a connection is established (admit).
type endpoint struct {
	n      *Node
	addr   string
	q      *outQueue
	wake   chan struct{}      // capacity 1: connection state changed
	timer  chan struct{}      // capacity 1: the wait's clock timer fired
	fire   func()             // sends on timer; one func value for every wait
	stop   chan struct{}      // closed by terminate
	cancel context.CancelFunc // cancels run's ctx (an in-flight dial)

	// used is set, under Node.mu, by the first local Send to the address
	// (Node.endpointFor): this node needs the peer (a request, a watch, a
	// reply it sent), so a lost connection is redialled. An endpoint that
	// only exists because a peer dialled in is retired instead when its
	// connection ends (retireUnused). Only used endpoints are in the
	// Node's lock-free snapshot, so Send finds an unused one on its slow
	// path, which marks it: the per-message path pays nothing for this.
	used atomic.Bool
	// local is set by the first Send of local code to the address (a
	// message that is not an answer to an address a peer named: see
	// sendClass). The dials of an endpoint with local set take nothing
	// from the Node's dial budget, but for its redials after a failed
	// dial while none of its dials has reached the address; every dial of
	// another endpoint does (run, Node.allowDial).
	local atomic.Bool
	// replyWaiting: counted in Node.replyWaiting (see Node.endpointFor);
	// guarded by Node.mu.
	replyWaiting bool

	mu              sync.Mutex
	conn            *conn  // current established connection
	peer            string // node ID of the current or last incarnation
	dialing         bool
	dialOverPending bool            // this dial waited out the pending inbound handshakes: they do not refuse it
	inboundPending  int             // inbound handshakes admitted, not completed
	everConnected   bool            // after a loss, reconnect even with an empty queue
	termErr         error           // set once by terminate or exit
	lastRead        <-chan struct{} // readDone of the connection installed last (see conn.after)
	retired         *retiredPeer    // the record of a retired endpoint at the address this one took over (Node.takeRetired); guarded by Node.mu
	gone            *goneRecord     // the record of its peer reported terminated by its end (Node.removeEndpoint); guarded by Node.mu

	w       connWriter // the right to write to the connection; guards frame and payload
	frame   []byte     // the frame being written, guarded by w.mu
	payload []byte     // the payload being encoded, guarded by w.mu
	batch   []outItem  // envelopes of the frame being written, owned by run
	held    outItem    // storage for the one envelope run holds ("carry"), owned by run
}

func newEndpoint(n *Node, addr string) *endpoint {
	ep := &endpoint{
		n: n, addr: addr,
		q:     newOutQueue(n.cfg.OutboundQueueSize, n.cfg.OutboundQueueBytes),
		wake:  make(chan struct{}, 1),
		timer: make(chan struct{}, 1),
		stop:  make(chan struct{}),
	}
	ep.w.flush = make(chan struct{}, 1)
	ep.fire = ep.fireTimer
	return ep
}

func (ep *endpoint) signal() {
	select {
	case ep.wake <- struct{}{}:
	default:
	}
}

// markLocal records a Send of local code (see local) and wakes run: a first
// dial the budget deferred goes at once. It reports whether it was the
// first; the caller then takes ep out of Node.replyWaiting (replyDone).
func (ep *endpoint) markLocal() bool {
	if ep.local.CompareAndSwap(false, true) {
		ep.signal()
		return true
	}
	return false
}

func (ep *endpoint) peerID() string {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.peer
}

func (ep *endpoint) current() *conn {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.conn
}

// enqueue writes an item directly when the connection is idle (tryDirect)
// or adds it to the queue without blocking: ErrQueueFull when the queue is
// full, ErrBlocked when the peer's node ID is blocked, errEndpointGone once
// the endpoint has stopped taking sends. It waits for no lock.
func (ep *endpoint) enqueue(it outItem) error {
	if ep.n.bl.active() {
		if id := ep.peerID(); id != "" && ep.n.bl.IsBlocked(id) {
			return fmt.Errorf("%w: node %s", ErrBlocked, id)
		}
	}
	if took, err := ep.tryDirect(&it); took {
		return err
	}
	switch err := ep.q.push(it); {
	case err == nil:
		return nil
	case errors.Is(err, ErrQueueFull):
		return ep.queueFull(it)
	default:
		return err
	}
}

// queueFull counts a refusal for a full queue, reports the start of a
// full episode, and returns the error.
func (ep *endpoint) queueFull(it outItem) error {
	n := ep.n
	n.stats.queueFull.Add(1)
	err := fmt.Errorf("%w: %d envelopes, ~%d bytes queued for %q (limits %d, %d bytes; this one ~%d bytes)",
		ErrQueueFull, ep.q.pending(), ep.q.bytesPending(), ep.addr, ep.q.limit, ep.q.limitBytes, it.size)
	if ep.q.markFull() {
		n.log.Info("remote: outbound queue full, refusing envelopes", "peer", ep.addr, "err", err)
		n.emit(Event{Kind: EventQueueFull, Peer: Peer{Address: ep.addr, NodeID: ep.peerID()}, Err: err})
	}
	return err
}

// admit applies the connection rules to a handshake that passed every
// other check.
//
// An inbound claim never replaces an established connection: while the
// endpoint has one, an inbound handshake for its address is refused and the
// established connection is probed (it closes unless the peer shows a frame
// within the probe timeout), so a peer that really lost it (or restarted)
// gets in on a later attempt, and one that only claims its address does
// not. The simultaneous-dial tie-break comes on top.
func (ep *endpoint) admit(peer hello, inbound bool) error {
	ep.mu.Lock()
	if ep.termErr != nil {
		ep.mu.Unlock()
		return errEndpointGone
	}
	lower := ep.n.id < peer.NodeID
	same := ep.conn != nil && ep.conn.peer.NodeID == peer.NodeID
	if inbound {
		if c := ep.conn; c != nil && !c.isClosed() {
			ep.mu.Unlock()
			ep.n.probe(c)
			return fmt.Errorf("%w: a connection to %q is established; it is being checked", ErrDuplicateConnection, ep.addr)
		}
		if ep.dialing && lower {
			ep.mu.Unlock()
			return fmt.Errorf("%w: node %s keeps its own outbound connection (lower node id)", ErrDuplicateConnection, ep.n.id)
		}
		ep.inboundPending++
		ep.mu.Unlock()
		return nil
	}
	defer ep.mu.Unlock()
	if same || (ep.inboundPending > 0 && !ep.dialOverPending) {
		return fmt.Errorf("%w: an inbound connection from %s is already in use", ErrDuplicateConnection, peer.NodeID)
	}
	return nil
}

// cancelPending undoes an inbound admission whose handshake failed. An
// endpoint that the failed handshake created and that holds nothing to send
// is retired quietly (its queue closed while empty), so peers that never
// complete a handshake cannot pile up idle endpoints.
func (ep *endpoint) cancelPending() {
	ep.mu.Lock()
	ep.inboundPending--
	unused := ep.conn == nil && !ep.everConnected && ep.inboundPending == 0 && ep.termErr == nil && ep.q.closeIfIdle()
	if unused {
		ep.termErr = errEndpointGone
	}
	ep.mu.Unlock()
	ep.signal()
	if unused {
		n := ep.n
		n.mu.Lock()
		n.replyDone(ep)
		if n.endpoints[ep.addr] == ep {
			delete(n.endpoints, ep.addr) // not in the snapshot: it was never used
		}
		rec := ep.retired
		due := n.restoreRetired(ep)
		n.mu.Unlock()
		if due {
			n.retiredDue(ep.addr, rec)
		}
		close(ep.stop)
		ep.cancel()
	}
}

// retireUnused removes an endpoint whose connection has ended when this node
// never sent to its address (used), holds nothing for it, and no inbound
// handshake for it is pending: the endpoint exists only because the peer
// dialled in, and is not redialled. Why: under plain TCP or one-way TLS a
// hello may claim any address, and each claimed address that was once
// connected was redialled with backoff until GiveUpAfter after the claimant
// left (2 000 claims: 2 000 endpoints and ~150 000 dials in 14 s with the
// tests' backoffs; TestClaimantsLeaveNoRedial). A real peer that needs the
// connection dials again; a Send from here makes a new endpoint that dials.
// The peer is not reported terminated (it may only have had a blip); its
// node ID is kept in Node.retired so that the next endpoint at the address
// still reports a restart. It reports whether it retired the endpoint; run
// then exits.
//
// It first waits for the reader of the connection installed last: that
// reader may still deliver envelopes it read before the connection closed,
// and the peer's next connection would come to a new endpoint, whose
// reader would not wait for it (conn.after) and could overtake them
// (TestReconnectKeepsOrderWhenRetired). The wait is short: the connection
// is closed, so the reader delivers what it holds and its next read fails.
func (ep *endpoint) retireUnused() bool {
	if ep.used.Load() {
		return false
	}
	ep.mu.Lock()
	last := ep.lastRead
	ep.mu.Unlock()
	if last != nil {
		<-last
	}
	n := ep.n
	// Whether the peer watches local processes: then it must come back
	// within GiveUpAfter (retiredPeer). Its reader has returned, so no
	// WatchRequest of this connection is still to come.
	watched := n.hooks.remote != nil && n.hooks.remote.watches.watchedFrom(ep.addr)
	retired, evicted := ep.retireLocked(watched)
	if evicted.rec != nil {
		n.retiredEvicted(evicted)
	}
	return retired
}

// retireLocked is retireUnused's part under the locks; it returns whether
// it retired ep, and the record the bound on them evicted (Node.retire).
func (ep *endpoint) retireLocked(watched bool) (bool, evictedPeer) {
	n := ep.n
	n.mu.Lock() // before ep.mu, as everywhere
	defer n.mu.Unlock()
	ep.mu.Lock()
	defer ep.mu.Unlock()
	// A Send marks the endpoint used under n.mu before it can push to it
	// (endpointFor; the snapshot holds only used endpoints), so nothing
	// can be pushed to an endpoint retired here.
	if ep.termErr != nil || ep.conn != nil || ep.inboundPending > 0 || ep.used.Load() || n.state != stateRunning || !ep.q.closeIfIdle() {
		return false, evictedPeer{}
	}
	ep.termErr = errEndpointGone
	if n.endpoints[ep.addr] == ep {
		delete(n.endpoints, ep.addr) // not in the snapshot: it was never used
	}
	var ev evictedPeer
	if ep.peer != "" {
		ev = n.retire(ep, watched)
	}
	return true, ev
}

// install makes c the endpoint's connection. An outbound c (this node
// dialed the address and the node there confirmed it) replaces and closes a
// previous connection; an inbound c is refused while one is established
// (see admit). It reports a peer restart when the node ID changed. It
// returns false (and closes c) when c is refused, the endpoint is gone or
// the peer is blocked.
func (ep *endpoint) install(c *conn) bool {
	n := ep.n
	ep.mu.Lock()
	if c.inbound {
		ep.inboundPending--
	}
	var refuse error
	var probe *conn
	switch {
	case ep.termErr != nil:
		refuse = fmt.Errorf("%w: endpoint for %q terminated", ErrStopped, ep.addr)
	case n.bl.IsBlocked(c.peer.NodeID, c.peer.Address):
		refuse = fmt.Errorf("%w: node %s", ErrBlocked, c.peer.NodeID)
	case c.inbound && ep.conn != nil && !ep.conn.isClosed():
		// Established while this handshake ran: the claim does not
		// replace it (see admit).
		refuse = fmt.Errorf("%w: a connection to %q is established; it is being checked", ErrDuplicateConnection, ep.addr)
		probe = ep.conn
	}
	if refuse != nil {
		ep.mu.Unlock()
		if probe != nil {
			n.probe(probe)
		}
		ep.signal()
		n.stats.connections.Add(1) // closeConn decrements
		n.closeConn(c, refuse)
		return false
	}
	old, previous := ep.conn, ep.peer
	ep.conn, ep.peer, ep.everConnected = c, c.peer.NodeID, true
	c.after, ep.lastRead = ep.lastRead, c.readDone
	n.stats.connections.Add(1)
	ep.mu.Unlock()
	n.markEstablished(ep, c.raw, c.peer) // after ep.mu: the lock order is n.mu before ep.mu
	ep.signal()
	if old != nil {
		n.closeConn(old, fmt.Errorf("%w: replaced by a newer connection", ErrDuplicateConnection))
	}
	n.log.Debug("remote: connected", "peer", c.peerRef().String(), "remote", c.remoteAddr, "inbound", c.inbound)
	n.emit(Event{Kind: EventConnected, Peer: c.peerRef(), RemoteAddr: c.remoteAddr, Inbound: c.inbound})
	if previous != "" && previous != c.peer.NodeID {
		ep.reportTerminated(Peer{Address: ep.addr, NodeID: previous}, fmt.Errorf("%w: %s replaced %s", ErrPeerRestarted, c.peer.NodeID, previous))
	}
	return true
}

// connLost forgets c if it is still the current connection.
func (ep *endpoint) connLost(c *conn) {
	ep.mu.Lock()
	if ep.conn == c {
		ep.conn = nil
	}
	ep.mu.Unlock()
}

// terminate ends the endpoint from any goroutine: it is removed from the
// Node (a later Send makes a new one), its connection closes, and run drains
// the queue into Undelivered and reports the peer terminated.
func (ep *endpoint) terminate(reason error) {
	ep.mu.Lock()
	if ep.termErr != nil {
		ep.mu.Unlock()
		return
	}
	ep.termErr = reason
	c := ep.conn
	ep.conn = nil
	ep.mu.Unlock()
	ep.n.removeEndpoint(ep)
	close(ep.stop)
	ep.cancel()
	if c != nil {
		ep.n.closeConn(c, reason)
	}
}

func (ep *endpoint) reportTerminated(p Peer, reason error) { ep.n.reportTerminated(p, reason) }

// reportTerminated logs, emits and reports (the PeerTerminated hook) that
// the incarnation p is gone.
func (n *Node) reportTerminated(p Peer, reason error) {
	n.log.Info("remote: peer terminated", "peer", p.String(), "reason", reason)
	n.emit(Event{Kind: EventPeerTerminated, Peer: p, Err: reason})
	if n.hooks.PeerTerminated != nil {
		n.hooks.PeerTerminated(p, reason)
	}
}

// exit is run's last act: no more sends, (unless the Node is closing) the
// peer is reported terminated, and the carried item and the queue go to
// Undelivered. The report comes before the dead letters: whoever sees one
// and sends again reaches a new endpoint, and the report, which fails the
// pending requests to the address, must not fail that new request.
func (ep *endpoint) exit(carry *outItem, nodeClosing bool) {
	n := ep.n
	ep.mu.Lock()
	if ep.termErr == nil {
		ep.termErr = fmt.Errorf("%w: node closing", ErrStopped)
	}
	reason, c, peer := ep.termErr, ep.conn, Peer{Address: ep.addr, NodeID: ep.peer}
	ep.conn = nil
	ep.mu.Unlock()
	gone := n.removeEndpoint(ep)
	if c != nil {
		n.closeConn(c, reason)
	}
	ep.q.close()
	if !nodeClosing && !errors.Is(reason, errEndpointGone) {
		ep.reportTerminated(peer, reason)
	}
	gone.done()
	if carry != nil {
		n.undelivered(Undelivered{Peer: peer, Envelope: carry.envelope(n), TypeName: carry.typeName(), Err: reason})
		ep.q.release(1, carry.size)
	}
	ep.q.drain(func(it outItem) {
		n.undelivered(Undelivered{Peer: peer, Envelope: it.envelope(n), TypeName: it.typeName(), Err: reason})
	})
}

// run is the endpoint's goroutine; ctx is cancelled by terminate and by
// Node.Close and only bounds dialing. It carries out the decisions of a
// linkPolicy fed with the Node's clock.
func (ep *endpoint) run(ctx context.Context) {
	n := ep.n
	defer ep.cancel()
	var carry *outItem
	pol := newLinkPolicy(&n.cfg, n.rand)
	finalTry := false // Close gives a peer that was not failing one attempt to connect and flush
	dialled := false  // a dial was made: every later one is a redial
	reached := false  // a dial of this endpoint connected: a node answered at the address, as itself
	// lastErr: why the last attempt to connect failed (a dial's error, a
	// refused handshake), cleared by a connection; the give-up's error
	// carries it, so that what fails then says why (another system's
	// name, a certificate), not only "unreachable"
	// (TestGiveUpNamesTheRefusedHandshake).
	var lastErr error
	for {
		select {
		case <-ep.stop:
			ep.exit(carry, false)
			return
		case <-n.stopping:
			if finalTry || pol.failing() || ep.current() != nil || ep.q.pending() == 0 {
				if c := ep.current(); c != nil && !finalTry {
					finalTry = true
					carry = ep.connected(c, carry) // flushes and says goodbye
					continue
				}
				ep.exit(carry, true)
				return
			}
			finalTry = true
		default:
		}
		c := ep.current()
		if c == nil {
			ep.mu.Lock()
			pending, reconnect := ep.inboundPending > 0, ep.everConnected
			ep.mu.Unlock()
			if !finalTry && ep.q.pending() == 0 && !reconnect {
				// Nothing to send and no connection to restore.
				if !ep.q.park() {
					continue // something was queued meanwhile
				}
				select {
				case <-ep.q.ready:
				case <-ep.wake:
				case <-ep.stop:
				case <-n.stopping:
				}
				continue
			}
			// A connection is wanted: the give-up clock runs from now until
			// one is established, whatever the reason it is not.
			now := n.clock.Now()
			pol.wanted(now)
			// The dials of an endpoint local code sent to are outside the
			// Node's dial budget until one fails before any has reached
			// the address, and again once one has (Close's last try is
			// outside it too); every other dial takes from it: see
			// Node.allowDial.
			budgeted := !finalTry && (!ep.local.Load() || dialled && !reached)
			act := pol.next(now, budgeted)
			if act.kind == linkGiveUp {
				reason := fmt.Errorf("%w: %q unreachable for %v", ErrPeerUnreachable, ep.addr, act.down.Round(time.Millisecond))
				if lastErr != nil {
					// The last attempt's sentinels matter to who reads the
					// reason (ErrClusterMismatch: another system), except
					// those that say something of a message or of this
					// node: a non-fraktor service answering at the address
					// gives ErrMalformed, the peer's own block list
					// ErrBlocked, its closing ErrStopped, and every request
					// failed at the give-up would read as undeliverable, or
					// as blocked here (TestReview7GiveUpKeepsMessageSentinelsOut,
					// TestReview7GiveUpAfterPeerBlockedUsIsNotErrBlocked).
					verb := "%w"
					if errors.Is(lastErr, ErrMalformed) || errors.Is(lastErr, ErrFrameTooLarge) || errors.Is(lastErr, ErrBlocked) || errors.Is(lastErr, ErrStopped) {
						verb = "%v"
					}
					reason = fmt.Errorf("%w: %q unreachable for %v; last attempt: "+verb, ErrPeerUnreachable, ep.addr, act.down.Round(time.Millisecond), lastErr)
				}
				ep.terminate(reason)
				continue
			}
			// An inbound handshake that claims this peer may bring the
			// connection: wait for it rather than dial across it, but only
			// for HandshakeTimeout since the connection was first wanted, so
			// that handshakes which never complete cannot hold dialing off.
			if pending && !finalTry {
				if left := pol.downSince.Add(n.cfg.HandshakeTimeout).Sub(now); left > 0 {
					ep.wait(now.Add(left))
					continue
				}
			}
			if act.kind == linkWait && !finalTry {
				ep.wait(now.Add(act.wait))
				continue // woken or due: ask again
			}
			if budgeted && !n.allowDial(now) {
				pol.budgetRefused(now)
				continue // waits for the next backoff slot
			}
			pol.dialing()
			dialled = true
			var err error
			c, err = ep.dial(ctx)
			reached = reached || err == nil
			if err != nil {
				if ep.current() != nil {
					continue // an inbound connection won meanwhile
				}
				lastErr = err
				pol.dialFailed(n.clock.Now())
				var de *dialError
				if errors.As(err, &de) {
					// After the policy took note, so that whoever reacts to
					// the event (a test moving a manual clock) sees it.
					n.emit(Event{Kind: EventDialFailed, Peer: Peer{Address: ep.addr}, Err: de.err})
				}
				continue
			}
		}
		pol.connected(n.clock.Now())
		lastErr = nil
		carry = ep.connected(c, carry)
		if ep.current() == nil && ep.retireUnused() {
			ep.exit(carry, false) // quietly: the peer is not known to be gone
			return
		}
		if c.goodbye.Load() {
			// Our goodbye was written: that was the Close's flush. What
			// was queued after it (by senders that took the endpoint just
			// before Close) goes to Undelivered at the next turn; a second
			// connection would race the peer's own reaction to the goodbye
			// and could lose envelopes without a report.
			finalTry = true
		}
		if ep.current() == nil {
			pol.lost(n.clock.Now())
		}
	}
}

// connected runs the writer on c until c ends, then cleans up after it.
func (ep *endpoint) connected(c *conn, carry *outItem) *outItem {
	carry, err := ep.writeLoop(c, carry)
	ep.n.closeConn(c, err)
	ep.connLost(c)
	if errors.Is(c.err, ErrPeerShutdown) {
		ep.terminate(c.err)
	}
	return carry
}

// wait waits until the Node's clock reaches until, or until something else
// happens first (a connection arrived, stop, close). The clock may move
// between reading it and arming the timer (a manual clock in a test): the
// timer is armed first, then the clock is read again, so the wait ends
// either way.
func (ep *endpoint) wait(until time.Time) {
	select {
	case <-ep.timer: // a stale wake-up from an earlier wait
	default:
	}
	clock := ep.n.clock
	stop := clock.AfterFunc(until.Sub(clock.Now()), ep.fire)
	defer stop()
	if !clock.Now().Before(until) {
		return
	}
	select {
	case <-ep.timer:
	case <-ep.wake:
	case <-ep.stop:
	case <-ep.n.stopping:
	}
}

// fireTimer is the endpoint's timer callback.
func (ep *endpoint) fireTimer() {
	select {
	case ep.timer <- struct{}{}:
	default:
	}
}
