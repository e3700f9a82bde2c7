package remote

import (
	"fmt"
	"time"
)

// retiredPeer is what the Node keeps of an endpoint retired unused
// (endpoint.retireUnused): the node ID its last connection had, so that the
// next endpoint at the address still reports a restart, and, when the peer
// watched local processes, the time by which it must have come back.
//
// Why the deadline: such a peer sent WatchRequests and nothing else made
// this node send to it, so its endpoint here is unused and is retired when
// the connection ends; nothing would ever report the peer terminated, and
// its watch entries (here and in the watched actors) stayed until each
// watchee stopped, whose Terminated then had this node dial the departed
// address until GiveUpAfter. A peer that only had a blip redials at once
// (its endpoint to this node is used: it sent the watches) and brings its
// node ID back in the handshake of its next connection, which makes a new
// endpoint here; a peer that has not done so within GiveUpAfter (the time
// this node grants any unreachable peer) is reported terminated, which ends
// its watches, without a dial (TestRetiredWatcherGoneEndsItsWatches). Should
// it connect again after all, with the same node ID, it is told that its
// watches here are gone (goneRecord).
type retiredPeer struct {
	id       string
	deadline time.Time // zero: no watches to end
	stop     func() bool
}

// evictedPeer is a retired watcher whose record the bound on them evicted
// (Node.retire): the caller reports it terminated (retiredEvicted) once
// n.mu is released.
type evictedPeer struct {
	addr string
	rec  *retiredPeer // nil: none
	gone *goneRecord  // its record as reported gone (markGone)
}

// retire records ep, retired unused, in n.retired; watched arms the
// deadline. n.mu held.
//
// Bounded, at peersCap records: the records without a deadline go first
// (only restart reports for those are lost); when every record has one, a
// new record without one is not kept, and for a new one with a deadline
// the one whose deadline comes first goes, and is returned: its peer is
// reported terminated now rather than at its deadline. Why: a record whose
// deadline were only stopped would leave its peer's watches, here and in
// the watched actors, until each watchee stopped, and a party that claims
// ever new addresses (plain TCP, one-way TLS), watches and leaves could
// pile them up for good by pushing the records out
// (TestRetiredBounded).
func (n *Node) retire(ep *endpoint, watched bool) evictedPeer {
	var ev evictedPeer
	if len(n.retired) >= n.peersCap {
		for a, rec := range n.retired {
			switch {
			case rec.stop == nil:
				delete(n.retired, a)
			case ev.rec == nil || rec.deadline.Before(ev.rec.deadline):
				ev = evictedPeer{addr: a, rec: rec}
			}
		}
		switch {
		case len(n.retired) < n.peersCap || ev.rec == nil:
			ev = evictedPeer{}
		case !watched:
			return evictedPeer{} // only its restart report is lost
		default:
			ev.rec.stop()
			delete(n.retired, ev.addr)
			ev.gone = n.markGone(ev.addr, ev.rec.id, ErrPeerUnreachable)
		}
	}
	rec := &retiredPeer{id: ep.peer}
	if watched {
		rec.deadline = n.clock.Now().Add(n.cfg.GiveUpAfter)
		addr := ep.addr
		rec.stop = n.clock.AfterFunc(n.cfg.GiveUpAfter, func() { n.retiredDue(addr, rec) })
	}
	n.retired[ep.addr] = rec
	return ev
}

// retiredEvicted reports the peer of a record the bound evicted (retire)
// terminated, as its deadline would have.
func (n *Node) retiredEvicted(ev evictedPeer) {
	n.reportTerminated(Peer{Address: ev.addr, NodeID: ev.rec.id},
		fmt.Errorf("%w: %q left and had not come back when the records of %d departed watchers were full", ErrPeerUnreachable, ev.addr, n.peersCap))
	ev.gone.done()
}

// takeRetired hands the record of address to a new endpoint there, which
// takes over the peer's fate: a connection with the same node ID keeps its
// watches, another node ID is a restart, a give-up reports it terminated,
// and a quiet end (retireUnused, cancelPending) records it again. n.mu
// held.
func (n *Node) takeRetired(ep *endpoint) {
	if rec, ok := n.retired[ep.addr]; ok {
		ep.peer, ep.retired = rec.id, rec
		delete(n.retired, ep.addr)
	}
}

// releaseRetired forgets the record ep took over, and stops its deadline,
// once it no longer matters: ep has a connection (the peer is back with
// its node ID, or was reported restarted), or ep is gone (it reported the
// peer terminated, the Node is closing, or retireUnused recorded the peer
// anew). Before, the deadline stayed armed until GiveUpAfter, one more
// timer for each connection of a peer that comes and goes, and one that
// could fire after Close (TestRetiredDeadlineStoppedOnReturn). A record
// handed back by restoreRetired is no longer ep's. n.mu held.
func (n *Node) releaseRetired(ep *endpoint) {
	if rec := ep.retired; rec != nil {
		if rec.stop != nil {
			rec.stop()
		}
		ep.retired = nil
	}
}

// restoreRetired records again the record ep took over, when ep ends
// quietly without ever having had a connection (a failed inbound
// handshake); a deadline that passed meanwhile is due at once. n.mu held;
// it reports whether the peer is due.
func (n *Node) restoreRetired(ep *endpoint) bool {
	rec := ep.retired
	if rec == nil {
		return false
	}
	ep.retired = nil
	if _, ok := n.retired[ep.addr]; ok {
		// A newer record: this one's deadline would find itself replaced.
		if rec.stop != nil {
			rec.stop()
		}
		return false
	}
	n.retired[ep.addr] = rec
	return rec.stop != nil && !n.clock.Now().Before(rec.deadline)
}

// retiredDue runs when the deadline of rec, retired at addr, has come: unless
// the peer came back meanwhile (the record was taken by a new endpoint) it
// is reported terminated. It runs on the clock's goroutine, so the report
// counts in n.wg, as the Node's goroutines do: Close waits for it
// (TestCloseWaitsForRetiredDeadline). The Add is made under n.mu while the
// Node is running, so before Close waits.
func (n *Node) retiredDue(addr string, rec *retiredPeer) {
	reason := fmt.Errorf("%w: %q left and did not come back within %v", ErrPeerUnreachable, addr, n.cfg.GiveUpAfter)
	n.mu.Lock()
	due := n.state == stateRunning && n.retired[addr] == rec
	var gone *goneRecord
	if due {
		delete(n.retired, addr) // reported gone: a later node ID there is no restart of it
		gone = n.markGone(addr, rec.id, reason)
		n.wg.Add(1)
	}
	n.mu.Unlock()
	if due {
		defer n.wg.Done()
		n.reportTerminated(Peer{Address: addr, NodeID: rec.id}, reason)
		gone.done()
	}
}

// stopRetired stops the deadlines of the retired peers (Close). n.mu held.
func (n *Node) stopRetired() {
	for _, rec := range n.retired {
		if rec.stop != nil {
			rec.stop()
		}
	}
}
