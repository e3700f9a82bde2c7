package remote

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// conn is an established (handshaken) connection. Its reader goroutine is
// the only reader and never writes (which matters on synchronous pipes).
// Writes go through the owning endpoint's connWriter: its goroutine writes
// batches, heartbeats and the goodbye, and on kernel-buffered streams a
// sender may write its own envelope when the connection is idle
// (endpoint.tryDirect).
type conn struct {
	raw        net.Conn
	fr         *frameReader
	peer       hello
	inbound    bool
	remoteAddr string

	pongReq chan uint64 // reader → writer: answer this ping (capacity 1)

	// A liveness probe: probeReq asks the writer for a ping now (capacity
	// 1); probeUntil (unix nanoseconds, 0 = none) is the read deadline by
	// which some frame must arrive, cleared by the reader on every frame.
	probeReq   chan struct{}
	probeUntil atomic.Int64

	framesIn frameCounter // frames read, counted before they are handled (see endpoint.tryDirect)

	// goodbye is set just before this side writes its goodbye: from then on
	// the end of the stream is the peer's expected answer, not a loss.
	// lingerUntil (unix nanoseconds, 0 = none) is set once the goodbye is
	// written: the reader reads on until the peer closes or this deadline
	// passes (see Node.awaitPeerClose).
	goodbye     atomic.Bool
	lingerUntil atomic.Int64

	// writeFailed is set when a write to raw failed: the stream may end in
	// half a frame (under TLS, half a record), and closeConn closes it
	// without a TLS close_notify, which would wait for a peer that stopped
	// reading (closeStream).
	writeFailed atomic.Bool

	closeOnce sync.Once
	closed    chan struct{}
	err       error // why it closed; written before closed is closed

	// readDone is closed when c's reader has returned. after is the
	// readDone of the connection its endpoint installed before c (nil:
	// none): c's reader delivers nothing before that reader has returned.
	// A connection this node closed may still hold frames its reader read
	// from the socket and has not delivered (its buffer, the frame in
	// hand), and the peer, which reconnects at once, sends its next
	// envelopes on c: without the wait they could overtake those
	// (TestReconnectKeepsOrderBehindOldReader). The wait is short: the
	// earlier connection is closed when c is installed (install), so its
	// reader delivers what it holds and its next read from the socket fails.
	readDone chan struct{}
	after    <-chan struct{}
}

func newConn(raw net.Conn, fr *frameReader, peer hello, inbound bool) *conn {
	return &conn{
		raw: raw, fr: fr, peer: peer, inbound: inbound, remoteAddr: remoteAddrOf(raw),
		pongReq: make(chan uint64, 1), probeReq: make(chan struct{}, 1), closed: make(chan struct{}),
		readDone: make(chan struct{}),
	}
}

// isClosed reports whether c has been closed (its endpoint may still hold
// it for a moment).
func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

func (c *conn) peerRef() Peer { return Peer{Address: c.peer.Address, NodeID: c.peer.NodeID} }

// maxFrame is the largest frame body to send on c: own, this node's
// MaxFrameSize, or the peer's when it said a smaller one in its hello.
func (c *conn) maxFrame(own int) int {
	if m := c.peer.MaxFrame; m != 0 && m < uint64(own) {
		return int(m)
	}
	return own
}

func remoteAddrOf(raw net.Conn) string {
	if a := raw.RemoteAddr(); a != nil {
		return a.String()
	}
	return ""
}

// closeConn closes c once, records why, and reports the disconnect.
func (n *Node) closeConn(c *conn, err error) {
	c.closeOnce.Do(func() {
		c.err = err
		close(c.closed)
		n.closeRaw(c.raw, c.writeFailed.Load())
		n.stats.connections.Add(-1)
		if c.inbound {
			n.inboundConns.Add(-1) // counted by admitInbound
		}
		n.log.Debug("remote: connection closed", "peer", c.peerRef().String(), "remote", c.remoteAddr, "inbound", c.inbound, "reason", err)
		n.emit(Event{Kind: EventDisconnected, Peer: c.peerRef(), RemoteAddr: c.remoteAddr, Inbound: c.inbound, Err: err})
	})
}

// probe checks that c is alive because another connection claims its
// peer: the writer sends a ping at once, and c closes unless some frame
// arrives within probeTimeout. A probe already running is not restarted.
// It does not block.
func (n *Node) probe(c *conn) {
	until := time.Now().Add(n.probeTimeout())
	if !c.probeUntil.CompareAndSwap(0, until.UnixNano()) {
		return
	}
	_ = c.raw.SetReadDeadline(until)
	select {
	case c.probeReq <- struct{}{}:
	default:
	}
}

// probeTimeout is how long a probed connection has to show a frame:
// HandshakeTimeout, but at least two heartbeat intervals (an idle live peer
// pings once per interval even if our ping waits behind a busy writer) and
// at most HeartbeatTimeout.
func (n *Node) probeTimeout() time.Duration {
	return min(n.cfg.HeartbeatTimeout, max(n.cfg.HandshakeTimeout, 2*n.cfg.HeartbeatInterval))
}

// awaitPeerClose is the end of a connection on which this side has written
// its goodbye: it waits until the peer closes it (the reader sees the end of
// the stream) or until probeTimeout has passed, and does not close it
// first. Closing a TCP socket while input is unread makes the kernel reset
// the connection, which discards what is still in our send buffer and not
// yet read by the peer: envelopes reported as written would be lost without
// an Undelivered report. The peer closes as soon as it reads the goodbye,
// which comes after everything we wrote, so a healthy peer ends the wait
// at once; meanwhile the reader delivers what the peer sent before it saw
// the goodbye. Node.Close's context ending closes the socket at once.
func (n *Node) awaitPeerClose(c *conn) {
	until := time.Now().Add(n.probeTimeout())
	c.lingerUntil.Store(until.UnixNano())
	_ = c.raw.SetReadDeadline(until) // the reader sets it again before its next read
	<-c.closed
}

// readLoop reads frames until the connection fails or is closed, delivering
// envelopes in order. It runs on its own tracked goroutine.
func (n *Node) readLoop(c *conn) {
	defer close(c.readDone)
	if c.after != nil {
		<-c.after // the earlier connection's envelopes first (see conn.after)
	}
	dec := newEnvelopeDecoder(n.addr, c.peer.Address)
	from := c.peerRef()
	for {
		_ = c.raw.SetReadDeadline(time.Now().Add(n.cfg.HeartbeatTimeout))
		if until := c.probeUntil.Load(); until != 0 {
			// A probe started: its deadline holds (probe stores it before
			// setting it, so one of the two settings is the last).
			_ = c.raw.SetReadDeadline(time.Unix(0, until))
		}
		if until := c.lingerUntil.Load(); until != 0 {
			// Our goodbye is out: the peer has until then to close.
			_ = c.raw.SetReadDeadline(time.Unix(0, until))
		}
		kind, body, err := c.fr.next()
		if err == nil {
			c.framesIn.inc()
			if c.probeUntil.Load() != 0 {
				c.probeUntil.Store(0) // the peer is alive
			}
			n.stats.framesReceived.Add(1)
			switch kind {
			case kindEnvelopes:
				if n.bl.IsBlocked(from.NodeID, from.Address) {
					n.closeConn(c, fmt.Errorf("%w: %s", ErrBlocked, from))
					return
				}
				err = n.deliverBatch(from, dec, body)
			case kindPing:
				var seq uint64
				seq, err = decodeSeq(body)
				if err == nil {
					select {
					case c.pongReq <- seq:
					default: // a pong is already due; one answer is enough
					}
				}
			case kindPong:
				_, err = decodeSeq(body)
			case kindGoodbye:
				n.closeConn(c, fmt.Errorf("%w: %s said goodbye", ErrPeerShutdown, from))
				return
			default:
				err = fmt.Errorf("%w: unexpected %v frame on an established connection", ErrMalformed, kind)
			}
		}
		if err != nil {
			n.readFailed(c, err)
			return
		}
	}
}

// readFailed classifies a read error and closes the connection.
func (n *Node) readFailed(c *conn, err error) {
	select {
	case <-c.closed:
		return // we closed it ourselves
	default:
	}
	switch {
	case c.goodbye.Load() && errors.Is(err, io.EOF):
		// The peer closed after our goodbye, as it should.
		err = fmt.Errorf("%w: node closing", ErrStopped)
	case c.lingerUntil.Load() != 0 && errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: the peer did not close within %v of our goodbye", ErrConnectionLost, n.probeTimeout())
	case isProtocolError(err):
		n.stats.protocolErrors.Add(1)
		n.log.Warn("remote: protocol error, closing connection", "peer", c.peerRef().String(), "remote", c.remoteAddr, "err", err)
		n.emit(Event{Kind: EventProtocolError, Peer: c.peerRef(), RemoteAddr: c.remoteAddr, Inbound: c.inbound, Err: err})
	case errors.Is(err, os.ErrDeadlineExceeded) && c.probeUntil.Load() != 0:
		err = fmt.Errorf("%w: no answer to a liveness probe within %v (another connection claimed this peer)", ErrConnectionLost, n.probeTimeout())
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: nothing received for %v (heartbeat timeout)", ErrConnectionLost, n.cfg.HeartbeatTimeout)
	default:
		err = fmt.Errorf("%w: %w", ErrConnectionLost, err)
	}
	n.closeConn(c, err)
}

// deliverBatch delivers the envelopes of an envelopes frame body in order,
// then yields if there was more than one (yieldAfterBatch). A malformed
// envelope ends it with ErrMalformed; those before it have been delivered.
func (n *Node) deliverBatch(from Peer, dec *envelopeDecoder, body []byte) error {
	b, err := dec.batch(body)
	var w wireEnvelope    // on the stack: see envelopeBatch
	var run actor.UserRun // on the stack too: no allocation per frame
	run.SetMaxBacklog(n.maxBacklog)
	envelopes, delivered := 0, 0
	for err == nil {
		var ok bool
		if ok, err = b.next(&w); !ok || err != nil {
			break
		}
		envelopes++
		if n.deliver(from, dec, &w, &run) {
			delivered++
		}
	}
	run.Flush()
	if k, pid := run.Refused(); k > 0 {
		n.hooks.remote.backlogRefused(from, pid, k) // only Remote's deliverInbound adds to a run
	}
	// One atomic add per frame, not per envelope (a locked instruction
	// per message on the reader, the one-way peer's busiest goroutine).
	n.stats.envelopesReceived.Add(uint64(delivered))
	if envelopes > 1 {
		yieldAfterBatch()
	}
	return err
}

// deliver deserializes one inbound envelope and hands it to the Remote
// extension that owns the Node, or else to the Deliver hook; it reports
// whether it was delivered (else Undelivered got it). The caller counts it
// in stats.envelopesReceived.
func (n *Node) deliver(from Peer, dec *envelopeDecoder, w *wireEnvelope, run *actor.UserRun) bool {
	c, err := dec.codec(n.ser, w)
	var msg any
	if err == nil {
		msg, err = c.decode(w.payload)
	}
	if err != nil {
		run.Flush() // the envelopes before it first
		n.logRefusal(from, w, err)
		n.emit(Event{Kind: EventUnknownType, Peer: from, Err: err})
		n.undelivered(Undelivered{Peer: from, Inbound: true, Envelope: w.envelope(nil), TypeName: w.typeName, Err: err})
		return false
	}
	if r := n.hooks.remote; r != nil {
		r.deliverInbound(from, dec, w, msg, run)
	} else if n.hooks.Deliver != nil {
		n.hooks.Deliver(from, w.envelope(msg))
	}
	return true
}

// logRefusal logs a refused inbound envelope, at most once per
// refusalLogInterval (see logThrottle). It is a function of its own, out of
// deliver: with the throttle's code in deliver's error branch, the branch
// never taken on the hot path, BenchmarkReceiveBatch took 4 to 7 % longer
// per envelope (interleaved runs on the 2-core build machine); out of it,
// the same as before the throttle.
func (n *Node) logRefusal(from Peer, w *wireEnvelope, err error) {
	if ok, suppressed := n.refusals.allow(n.clock.Now()); ok {
		n.log.Warn("remote: refusing inbound envelope", "peer", from.String(), "serializer", w.serializer.String(), "type", w.typeName, "err", err, "suppressed", suppressed)
	}
}

// yieldAfterBatch is the reader's yield after delivering a frame of
// several envelopes, so that the actors the frame woke run before the
// reader decodes the next one.
//
// Why: an envelope posted to an idle actor makes a worker goroutine
// runnable, and the Go runtime puts a goroutine readied by a running one in
// that one's own processor's run-next slot. It runs there when the reader
// blocks, or elsewhere when an idle processor steals it; a processor busy
// with an idle-priority GC mark worker (frequent under a stream of decoded
// messages) does not look. While frames keep arriving the reader does not
// block, so the receivers waited for the reader: in the one-way benchmark's
// peer (BENCH_PEER_TRACE) the sink's worker was runnable but not running
// for 42 % of the run, its mailbox held the window of unacknowledged
// messages, and the reader itself sat idle for a third of the run waiting
// for the sender, which waited for the sink's acknowledgements. A frame of
// one envelope (request/response) needs no yield: the reader's next read
// finds nothing and blocks, which hands over the processor the same way.
// TestReaderYieldsAfterBatch pins it.
func yieldAfterBatch() { runtime.Gosched() }

func decodeSeq(body []byte) (uint64, error) {
	c := cursor{b: body}
	v := c.uvarint()
	return v, c.finish("heartbeat")
}

// writeFrame writes one whole frame under the write timeout.
func (n *Node) writeFrame(c *conn, frame []byte) error {
	_ = c.raw.SetWriteDeadline(time.Now().Add(n.cfg.WriteTimeout))
	if _, err := c.raw.Write(frame); err != nil {
		c.writeFailed.Store(true)
		return fmt.Errorf("%w: write: %w", ErrConnectionLost, err)
	}
	n.stats.framesSent.Add(1)
	return nil
}
