package remote

import (
	"encoding/binary"
	"errors"

	"github.com/fraktor-go/fraktor/actor"
)

// goneRecord is what a Node keeps of a peer incarnation it reported
// terminated while that incarnation may still live: it stayed unreachable
// for GiveUpAfter (give-up, or a retired watcher that did not come back)
// or was blocked. Its report made the Remote extension drop every watch
// across the link (Remote.peerTerminated): this node's watchers of the
// peer's processes were told Terminated{AddressTerminated} and the peer's
// watchers were forgotten here. The peer may not know: a long partition or
// a paused process comes back with the same node ID and still believes
// its watches here are in place, and a watched actor's stop would then
// tell it nothing, ever. So the first connection the incarnation makes
// again carries, as this node's first envelope on it, a *WatchesDropped
// (endpoint.attach), upon which the peer ends its side of those watches
// (Remote.watchesDropped); the record is then forgotten
// (TestReturnAfterGiveUpLearnsItsWatchesGone), as it is when another
// incarnation connects from the address (rememberPeer).
//
// Kept only under the Remote extension (a bare Node holds no watches),
// by node ID, bounded at peersCap records (markGone).
type goneRecord struct {
	addr string
	seq  uint64 // age, for the bound
	// reported is closed once the report (the PeerTerminated hook) has
	// returned: the notice goes out only after this node dropped its side,
	// so that a watch the peer makes after reading the notice is not
	// dropped by a report still under way (Node.goneNotice).
	reported chan struct{}
}

// done closes g.reported; nil-safe. Called once, by whoever made g, after
// the report.
func (g *goneRecord) done() {
	if g != nil {
		close(g.reported)
	}
}

// markGone records that the incarnation id at addr is reported terminated
// for reason, when reason leaves it alive (ErrPeerUnreachable, ErrBlocked;
// not a goodbye or a restart, whose incarnation never comes back). It
// returns the record (nil: none), whose done the caller calls after the
// report. Bounded: at peersCap records the oldest goes (its peer, should it
// come back, is not told). n.mu held.
func (n *Node) markGone(addr, id string, reason error) *goneRecord {
	if n.hooks.remote == nil || id == "" || !errors.Is(reason, ErrPeerUnreachable) && !errors.Is(reason, ErrBlocked) {
		return nil
	}
	if _, ok := n.gone[id]; !ok && len(n.gone) >= n.peersCap {
		var oldest string
		var seq uint64
		for k, g := range n.gone {
			if oldest == "" || g.seq < seq {
				oldest, seq = k, g.seq
			}
		}
		delete(n.gone, oldest)
	}
	n.goneSeq++
	g := &goneRecord{addr: addr, seq: n.goneSeq, reported: make(chan struct{})}
	n.gone[id] = g
	return g
}

// goneNotice returns the record of c's peer incarnation if it was reported
// gone from c's address (nil: none), once the report has returned. It
// returns nil instead when c closes, the endpoint stops or the Node closes
// first. Called by the writer when it starts on c, once per connection: the
// message path pays nothing for it.
func (n *Node) goneNotice(c *conn, stop <-chan struct{}) *goneRecord {
	n.mu.Lock()
	g := n.gone[c.peer.NodeID]
	n.mu.Unlock()
	if g == nil || g.addr != c.peer.Address {
		return nil
	}
	select {
	case <-g.reported:
		return g
	case <-c.closed:
	case <-stop:
	case <-n.stopping:
	}
	return nil
}

// forgetGoneAt forgets the record of id at addr, whose incarnation another
// one has replaced there (rememberPeer). n.mu held.
func (n *Node) forgetGoneAt(id, addr string) {
	if g := n.gone[id]; g != nil && g.addr == addr {
		delete(n.gone, id)
	}
}

// forgetGone forgets g, the record of id, once its notice is written.
func (n *Node) forgetGone(id string, g *goneRecord) {
	n.mu.Lock()
	if n.gone[id] == g {
		delete(n.gone, id)
	}
	n.mu.Unlock()
}

// writeGoneNotice writes the *WatchesDropped for c's peer as the first
// frame on c, before any other write can start (endpoint.attach, w.mu
// held, direct writes not yet allowed). On an error the record stays, for
// the next connection.
func (ep *endpoint) writeGoneNotice(c *conn) error {
	n, w := ep.n, &ep.w
	msg := &WatchesDropped{NodeID: c.peer.NodeID}
	codec, err := n.ser.codecFor(msg)
	if err != nil {
		return err // not for a SystemMessage
	}
	it := outItem{target: actor.NewPID(c.peer.Address, ""), msg: msg, codec: codec}
	wire, _, err := ep.encode(&it, c.maxFrame(n.cfg.MaxFrameSize))
	if err != nil {
		return err // a node ID is far below any frame size
	}
	frame := appendFrameHeader(ep.frame[:0], kindEnvelopes, 0)
	frame = w.e.append(frame, &wire)
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(frame)-frameHeaderSize))
	ep.frame = frame[:0]
	if err := n.writeFrame(c, frame); err != nil {
		return err
	}
	w.hb.written()
	n.stats.envelopesSent.Add(1)
	return nil
}

// watchesDropped handles a *WatchesDropped from the peer from: the peer
// reported this incarnation terminated (it did not come back within the
// peer's GiveUpAfter, or was blocked there) and dropped every watch across
// the link, which this node still held. So this node ends its side as it
// would for a peer reported gone (peerTerminated): each local watcher of a
// process at from's address gets Terminated{AddressTerminated} (the peer
// will never send its Terminated) and the peer is told to forget the watch
// (an UnwatchRequest: a Watch this node sent on the new connection before
// it read the notice reached the peer after its report, and holds there);
// local processes forget the peer's watchers (the peer's watchers were told
// Terminated when it reported). A notice for another incarnation of this
// node (one written to its predecessor at this address) is ignored.
// Requests, spawns and the connection are untouched: the peer is alive.
func (r *Remote) watchesDropped(from Peer, m *WatchesDropped) {
	if m.NodeID != r.NodeID() {
		r.log.Debug("remote: watches-dropped notice for another incarnation ignored", "peer", from.String(), "node", m.NodeID)
		return
	}
	out, in := r.endWatchesAt(from.Address, true)
	r.log.Info("remote: peer had reported this node gone and dropped the watches across the link",
		"peer", from.String(), "watchers_notified", len(out), "remote_watchers_dropped", in)
	r.sys.EventStream().Publish(&WatchesDroppedEvent{Address: from.Address, NodeID: from.NodeID, Watchers: len(out), RemoteWatchers: in})
}

// WatchesDroppedEvent is published on the actor system's EventStream when a
// peer that had reported this node terminated (this node was unreachable
// for the peer's GiveUpAfter, or blocked there) connects again and says so
// (*WatchesDropped): the Watchers local watchers of its processes have been
// sent Terminated{Why: AddressTerminated}, and the RemoteWatchers watches
// of its processes on local ones forgotten, as if the peer's node had been
// lost. The peer itself is alive; requests and the connection go on.
type WatchesDroppedEvent struct {
	Address, NodeID          string
	Watchers, RemoteWatchers int
}
