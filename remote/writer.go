package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// dial opens, handshakes and installs an outbound connection, and starts its
// reader. It runs on the endpoint's goroutine.
func (ep *endpoint) dial(ctx context.Context) (*conn, error) {
	n := ep.n
	ep.mu.Lock()
	if ep.conn != nil || ep.termErr != nil {
		ep.mu.Unlock()
		return nil, fmt.Errorf("%w: not dialing %q, a connection exists", ErrDuplicateConnection, ep.addr)
	}
	// run dials while inbound handshakes are pending only once it waited
	// HandshakeTimeout for them (or the Node is closing).
	ep.dialing, ep.dialOverPending = true, ep.inboundPending > 0
	ep.mu.Unlock()
	defer func() {
		ep.mu.Lock()
		ep.dialing, ep.dialOverPending = false, false
		ep.mu.Unlock()
	}()

	dctx, cancel := context.WithTimeout(ctx, n.cfg.DialTimeout)
	raw, err := n.tr.Dial(dctx, ep.addr)
	cancel()
	if err != nil {
		n.log.Debug("remote: dial failed", "peer", ep.addr, "err", err)
		return nil, &dialError{err: err}
	}
	if !n.track(raw, rawOutboundHandshake) {
		return nil, ErrStopped
	}
	_ = raw.SetDeadline(time.Now().Add(n.cfg.HandshakeTimeout))
	fr := newHandshakeReader(raw)
	hs := n.localHandshake(raw, func(peer hello) error { return ep.admit(peer, false) })
	peer, err := hs.dial(fr, raw, ep.addr)
	if err != nil {
		n.refused(Peer{Address: ep.addr, NodeID: peer.NodeID}, remoteAddrOf(raw), false, err)
		n.closeRaw(raw, false)
		return nil, err
	}
	_ = raw.SetDeadline(time.Time{})
	fr.establish(n.cfg.MaxFrameSize)
	c := newConn(raw, fr, peer, false)
	if !ep.install(c) {
		return nil, c.err
	}
	n.wg.Go(func() { n.readLoop(c) })
	return c, nil
}

// dialError is a failure of the transport's Dial (as opposed to a refused
// handshake); run reports it as EventDialFailed.
type dialError struct{ err error }

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// writeLoop serves c: it writes everything but the direct writes of
// senders (tryDirect), each write under ep.w.mu. It takes envelopes from the queue and
// writes them in batches: the first envelope is written at once (no added
// latency when idle), and everything that queued up meanwhile goes into the
// next frame (one write per frame, however many envelopes, up to
// batchTarget bytes). While idle it answers pings and sends one when the
// connection was idle for a heartbeat interval (a busy connection needs
// neither: its frames keep the peer's read deadline alive). It returns the
// envelope it holds but could not write, and why it stopped.
func (ep *endpoint) writeLoop(c *conn, carry *outItem) (_ *outItem, err error) {
	n := ep.n
	gone := n.goneNotice(c, ep.stop)
	err = ep.attach(c, gone != nil)
	defer func() { ep.detach(c, err) }()
	if err != nil {
		return carry, err
	}
	if gone != nil {
		n.forgetGone(c.peer.NodeID, gone)
	}
	// The heartbeat ticks on the Node's clock: one timer at a time, re-armed
	// when it fired.
	tick := make(chan struct{}, 1)
	fire := func() {
		select {
		case tick <- struct{}{}:
		default:
		}
	}
	stopTick := n.clock.AfterFunc(n.cfg.HeartbeatInterval, fire)
	defer func() { stopTick() }()
	var seq uint64
	flushing := false
	for {
		if carry == nil {
			if it, ok := ep.q.pop(); ok {
				ep.held = it
				carry = &ep.held
			} else if flushing {
				if err := ep.writeControl(c, kindGoodbye, false, 0); err != nil {
					return nil, err
				}
				n.awaitPeerClose(c)
				return nil, fmt.Errorf("%w: node closing", ErrStopped)
			} else {
				if !ep.q.park() {
					continue // something arrived meanwhile
				}
				select {
				case <-ep.q.ready:
				case <-ep.w.flush:
					if err := ep.finishDirectLocking(c); err != nil {
						return nil, err
					}
				case <-c.probeReq:
					seq++
					if err := ep.writeControl(c, kindPing, false, seq); err != nil {
						return nil, err
					}
				case s := <-c.pongReq:
					if err := ep.writeControl(c, kindPong, false, s); err != nil {
						return nil, err
					}
				case <-tick:
					stopTick = n.clock.AfterFunc(n.cfg.HeartbeatInterval, fire)
					if err := ep.writeControl(c, kindPing, true, seq+1); err != nil {
						return nil, err
					}
					seq++
				case <-c.closed:
					return nil, c.err
				case <-ep.stop:
					return nil, ep.stopReason()
				case <-n.stopping:
					flushing = true
				}
				continue
			}
		}
		// The envelope may have been taken although c has closed meanwhile:
		// keep it for the next connection rather than write it into a dead
		// socket (and lose it).
		select {
		case <-c.closed:
			return carry, c.err
		default:
		}
		if carry, err = ep.writeBatch(c, carry); err != nil {
			return carry, err
		}
	}
}

// finishDirectLocking is finishDirect under the write lock: the writer
// goroutine's answer to a direct write that handed it the rest of its
// frame.
func (ep *endpoint) finishDirectLocking(c *conn) error {
	ep.w.mu.Lock()
	defer ep.w.mu.Unlock()
	return ep.finishDirect(c)
}

// writeControl writes a ping, pong (both with sequence number seq) or
// goodbye frame under the connection's write lock. With heartbeat it is the
// heartbeat tick's ping, written only when no frame was written since the
// previous tick.
func (ep *endpoint) writeControl(c *conn, kind frameKind, heartbeat bool, seq uint64) error {
	w := &ep.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ep.finishDirect(c); err != nil {
		return err // a frame is on the wire half-written: nothing else may follow
	}
	if heartbeat && !w.hb.tick() {
		return nil
	}
	if kind == kindGoodbye {
		// Nothing may follow the goodbye: the peer stops reading there, so
		// a direct write after it would be lost without a report. Senders
		// queue from now on, and the queue goes to Undelivered.
		w.direct.Store(nil)
		c.goodbye.Store(true)
	}
	var body []byte
	if kind != kindGoodbye {
		body = appendUvarint(ep.payload[:0], seq)
	}
	frame := appendFrame(ep.frame[:0], kind, body)
	ep.frame = frame[:0]
	return ep.n.writeFrame(c, frame)
}

// writeBatch encodes first and whatever else is queued (up to batchTarget
// bytes) into one frame and writes it. An envelope that cannot be encoded
// (its serializer fails or panics, or it exceeds the maximum frame size) is
// handed to Undelivered alone. On a write error the batch is reported Undelivered
// with ErrConnectionLost (it may or may not have arrived). It returns the
// next envelope if it did not fit.
func (ep *endpoint) writeBatch(c *conn, first *outItem) (*outItem, error) {
	n := ep.n
	w := &ep.w
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := ep.finishDirect(c); err != nil {
		return first, err // first stays for the next connection
	}
	enc := w.e
	maxFrame := c.maxFrame(n.cfg.MaxFrameSize)
	limit := min(frameHeaderSize+maxFrame, batchTarget)
	frame := appendFrameHeader(ep.frame[:0], kindEnvelopes, 0)
	batch := ep.batch[:0]
	refused := 0
	var size int64 // of the items released below
	cur, has := *first, true
	for has {
		w, maxLen, err := ep.encode(&cur, maxFrame)
		if err != nil {
			if errors.Is(err, ErrCodecPanic) {
				n.log.Warn("remote: serializer panicked, envelope dropped", "peer", c.peerRef().String(), "type", cur.typeName(), "err", err)
			}
			n.undelivered(Undelivered{Peer: c.peerRef(), Envelope: cur.envelope(n), TypeName: cur.typeName(), Err: err})
			refused++
		} else {
			if len(batch) > 0 && len(frame)+maxLen > limit {
				break // cur starts the next frame
			}
			frame = enc.append(frame, &w)
			batch = append(batch, cur)
		}
		size += cur.size
		cur, has = ep.q.pop()
	}
	var next *outItem
	if has {
		ep.held = cur
		next = &ep.held
	} else {
		// Written or refused: held keeps no message, target or sender (a
		// future, with its answer) alive until the next envelope
		// (TestNewuser10AnsweredFutureNotKeptByInboundCache).
		ep.held = outItem{}
	}
	var err error
	if len(batch) > 0 {
		binary.BigEndian.PutUint32(frame[5:9], uint32(len(frame)-frameHeaderSize))
		if err = n.writeFrame(c, frame); err == nil {
			w.hb.written()
			n.stats.envelopesSent.Add(uint64(len(batch)))
		} else {
			peer := c.peerRef()
			for i := range batch {
				n.undelivered(Undelivered{Peer: peer, Envelope: batch[i].envelope(n), TypeName: batch[i].typeName(), Err: err})
			}
		}
	}
	ep.q.release(len(batch)+refused, size)
	clear(batch) // drop message references
	if cap(frame) > 2*batchTarget {
		frame = nil // a rare huge envelope: do not keep its buffer for ever
	}
	ep.frame, ep.batch = frame[:0], batch[:0]
	return next, err
}

// encode serializes the message of it into the endpoint's payload buffer and
// returns its wire form, valid until the next encode, with its
// maxEncodedLen (computed once: the frame-size check here and the caller's
// batch limit both need it). An envelope larger than maxFrame (the
// connection's, conn.maxFrame) is ErrFrameTooLarge.
func (ep *endpoint) encode(it *outItem, maxFrame int) (wireEnvelope, int, error) {
	if cap(ep.payload) > batchTarget {
		ep.payload = nil // the last one was huge
	}
	msg, h := it.body()
	p, err := it.codec.encodeQueued(ep.payload[:0], msg)
	ep.payload = p[:0]
	if err == nil {
		it.codec.encoded(len(p))
	}
	n := ep.n
	w := wireEnvelope{target: n.wireRef(it.target), sender: n.wireRef(it.sender), serializer: it.codec.ser, typeName: it.codec.name, payload: p, header: h}
	if err != nil {
		return w, 0, err
	}
	l := w.maxEncodedLen()
	if l > maxFrame {
		return w, l, fmt.Errorf("%w: envelope of up to %d bytes, maximum frame %d (the smaller of this node's and the peer's)", ErrFrameTooLarge, l, maxFrame)
	}
	return w, l, nil
}

func (ep *endpoint) stopReason() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.termErr
}

// batchTarget bounds the bytes of one envelopes frame that writeBatch fills
// from the queue (a single larger envelope still goes alone). Frames of a
// few tens of kilobytes keep both ends busy at once: the peer decodes one
// while the next is on its way, where one frame of a whole deep queue would
// leave each side waiting for the other.
const batchTarget = 64 << 10
