package remote

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"
)

// dial opens, handshakes and installs an outbound connection, and starts its
// reader. It runs on the endpoint's goroutine.
func (ep *endpoint) dial(ctx context.Context) (*conn, error) {
	n := ep.n
	ep.mu.Lock()
	if ep.conn != nil || ep.inboundPending > 0 || ep.termErr != nil {
		ep.mu.Unlock()
		return nil, fmt.Errorf("%w: not dialing %q, a connection exists or is pending", ErrDuplicateConnection, ep.addr)
	}
	ep.dialing = true
	ep.mu.Unlock()
	defer func() {
		ep.mu.Lock()
		ep.dialing = false
		ep.mu.Unlock()
	}()

	dctx, cancel := context.WithTimeout(ctx, n.cfg.DialTimeout)
	raw, err := n.tr.Dial(dctx, ep.addr)
	cancel()
	if err != nil {
		n.log.Debug("remote: dial failed", "peer", ep.addr, "err", err)
		n.emit(Event{Kind: EventDialFailed, Peer: Peer{Address: ep.addr}, Err: err})
		return nil, err
	}
	if !n.track(raw, rawOutboundHandshake) {
		return nil, ErrStopped
	}
	_ = raw.SetDeadline(time.Now().Add(n.cfg.HandshakeTimeout))
	fr := newFrameReader(raw, n.cfg.MaxFrameSize)
	hs := n.localHandshake(func(peer hello) error { return ep.admit(peer, false) })
	peer, err := hs.dial(fr, raw, ep.addr)
	if err != nil {
		n.refused(Peer{Address: ep.addr, NodeID: peer.NodeID}, remoteAddrOf(raw), false, err)
		n.closeRaw(raw)
		return nil, err
	}
	_ = raw.SetDeadline(time.Time{})
	c := newConn(raw, fr, peer, false)
	if !ep.install(c) {
		return nil, c.err
	}
	n.wg.Go(func() { n.readLoop(c) })
	return c, nil
}

// writeLoop is the only writer of c. It takes envelopes from the queue and
// writes them in batches: the first envelope is written at once (no added
// latency when idle), and everything that queued up meanwhile goes into the
// next frame (one write per frame, however many envelopes). It also answers
// pings and sends one when the connection was idle for a heartbeat interval.
// It returns the envelope it holds but could not write, and why it stopped.
func (ep *endpoint) writeLoop(c *conn, carry *outItem) (*outItem, error) {
	n := ep.n
	enc := newEnvelopeEncoder(n.addr, c.peer.Address)
	tick := time.NewTicker(n.cfg.HeartbeatInterval)
	defer tick.Stop()
	wrote := false
	var seq uint64
	flushing := false
	for {
		if carry == nil {
			if flushing {
				select {
				case it := <-ep.queue:
					ep.held = it
					carry = &ep.held
				default:
					err := n.writeFrame(c, appendFrame(ep.frame[:0], kindGoodbye, nil))
					if err == nil {
						err = fmt.Errorf("%w: node closing", ErrStopped)
					}
					return nil, err
				}
			} else {
				select {
				case it := <-ep.queue:
					ep.held = it
					carry = &ep.held
				case s := <-c.pongReq:
					if err := n.writeFrame(c, appendFrame(ep.frame[:0], kindPong, appendUvarint(nil, s))); err != nil {
						return nil, err
					}
					continue
				case <-tick.C:
					if !wrote {
						seq++
						if err := n.writeFrame(c, appendFrame(ep.frame[:0], kindPing, appendUvarint(nil, seq))); err != nil {
							return nil, err
						}
					}
					wrote = false
					continue
				case <-c.closed:
					return nil, c.err
				case <-ep.stop:
					return nil, ep.stopReason()
				case <-n.stopping:
					flushing = true
					continue
				}
			}
		}
		// The select above may pick a queued envelope although c has closed
		// meanwhile: keep it for the next connection rather than write it
		// into a dead socket (and lose it).
		select {
		case <-c.closed:
			return carry, c.err
		default:
		}
		var err error
		if carry, err = ep.writeBatch(c, enc, carry); err != nil {
			return carry, err
		}
		wrote = true
	}
}

// writeBatch encodes first and whatever else is queued (up to the maximum
// frame size) into one frame and writes it. On a write error the batch is
// reported Undelivered with ErrConnectionLost (it may or may not have
// arrived). It returns the next envelope if it did not fit.
func (ep *endpoint) writeBatch(c *conn, enc *envelopeEncoder, first *outItem) (*outItem, error) {
	n := ep.n
	limit := frameHeaderSize + n.cfg.MaxFrameSize
	frame := appendFrameHeader(ep.frame[:0], kindEnvelopes, 0)
	batch := ep.batch[:0]
	cur, has := *first, true
	for has {
		if len(batch) > 0 && len(frame)+cur.w.maxEncodedLen() > limit {
			break
		}
		frame = enc.append(frame, &cur.w)
		batch = append(batch, cur)
		has = false
		select {
		case cur = <-ep.queue:
			has = true
		default:
		}
	}
	var next *outItem
	if has {
		ep.held = cur
		next = &ep.held
	}
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(frame)-frameHeaderSize))
	err := n.writeFrame(c, frame)
	if err == nil {
		n.stats.envelopesSent.Add(uint64(len(batch)))
	} else {
		peer := c.peerRef()
		for i := range batch {
			n.undelivered(Undelivered{Peer: peer, Envelope: batch[i].envelope(), TypeName: batch[i].w.typeName, Err: err})
		}
	}
	clear(batch) // drop payload references
	if cap(frame) > 256<<10 {
		frame = nil // a rare huge frame: do not keep its buffer for ever
	}
	ep.frame, ep.batch = frame[:0], batch[:0]
	return next, err
}

func (ep *endpoint) stopReason() error {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	return ep.termErr
}
