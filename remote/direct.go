package remote

import (
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// connWriter is the right to write to an endpoint's current connection.
// Whoever holds mu writes: the endpoint's writer goroutine for every batch,
// ping, pong and goodbye, or a sending goroutine for one envelope of its
// own (a direct write, see endpoint.tryDirect). Everything below mu is
// guarded by it, and so are the endpoint's frame and payload buffers.
type connWriter struct {
	mu sync.Mutex
	c  *conn            // the connection the writer goroutine serves; nil between connections
	e  *envelopeEncoder // c's encoder (its name table is per connection)
	hb heartbeatPolicy

	// direct is c while c allows direct writes (a kernel-buffered stream),
	// else nil. Stored under mu, loaded without it by tryDirect's first
	// look, so that a sender that cannot write directly takes no lock.
	direct atomic.Pointer[conn]
	// lastIn is c.framesIn when the last direct write was decided: the next
	// one waits until a frame has arrived since (see tryDirect). Stored
	// under mu.
	lastIn atomic.Uint64
	// now writes to c without waiting (a TCP or Unix socket on a Unix
	// system); nil under TLS, whose writes cannot be split like that.
	now *nowWriter

	// rest is the unwritten end of a direct write's frame that did not fit
	// the socket buffer (written with now), and restItem its envelope. The peer has the frame's beginning, so the
	// writer goroutine writes rest before any other frame (finishDirect);
	// while rest is pending no other direct write starts. flush (capacity
	// 1) wakes the writer goroutine for it. restBuf is rest's storage.
	rest     []byte
	restBuf  []byte
	restItem outItem
	flush    chan struct{}
}

// directMaxFrame bounds the frame of a direct write. A frame this small is
// taken whole by the kernel's socket send buffer (Linux gives a TCP socket
// at least 16 KiB, autotuned upwards) unless the peer has stopped reading
// with the buffer already full; see tryDirect for that case.
const directMaxFrame = 4 << 10

// directWait bounds how long a direct write without a nowWriter (under
// TLS, or on a system without one) waits for room in the socket's send buffer, so that a peer that
// stops reading holds a sender (an actor's goroutine) only that long, not
// WriteTimeout. A TLS write that times out cannot be resumed: the
// connection is closed and the envelope reported Undelivered, so the wait
// is long enough that only a peer that has stopped reading reaches it.
const directWait = 500 * time.Millisecond

// directCapable reports whether writes to raw go into a kernel socket
// buffer (TCP or Unix sockets, also under TLS), so that a write of a small
// frame returns without waiting for the peer to read. Synchronous streams
// (net.Pipe, as in MemoryNetwork) and unknown transports are not: there a
// direct write from a connection's reader goroutine (the Deliver hook may
// send) could wait for the peer's reader, which may be waiting for ours.
func directCapable(raw net.Conn) bool {
	if tc, ok := raw.(*tls.Conn); ok {
		raw = tc.NetConn()
	}
	switch raw.(type) {
	case *net.TCPConn, *net.UnixConn:
		return true
	}
	return false
}

// attach makes c the connection that the writer goroutine serves; called by
// writeLoop when it starts on c. With gone it first writes the notice that
// c's peer incarnation was reported terminated here (writeGoneNotice), so
// that nothing precedes it on c: direct writes are allowed only after it.
// On an error writing it, c is left without direct writes.
func (ep *endpoint) attach(c *conn, gone bool) error {
	w := &ep.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.c, w.e, w.hb = c, newEnvelopeEncoder(ep.n.addr, c.peer.Address), heartbeatPolicy{}
	w.lastIn.Store(c.framesIn.Load() - 1) // the first direct write needs no frame in
	w.now = nil
	if gone {
		if err := ep.writeGoneNotice(c); err != nil {
			return err
		}
	}
	if directCapable(c.raw) {
		w.now = newNowWriter(c.raw)
		w.direct.Store(c)
	}
	return nil
}

// detach ends direct writes to the connection writeLoop served; called when
// writeLoop returns, with why. The unwritten end of a direct write still
// pending cannot be written any more: its envelope goes to Undelivered.
func (ep *endpoint) detach(c *conn, why error) {
	w := &ep.w
	w.mu.Lock()
	defer w.mu.Unlock()
	w.c, w.e, w.now = nil, nil, nil
	w.direct.Store(nil)
	if w.rest != nil {
		if why == nil {
			why = ErrConnectionLost
		}
		ep.dropRest(c, fmt.Errorf("%w: the connection ended during a direct write: %w", ErrConnectionLost, why))
	}
}

// dropRest reports the envelope of a pending rest Undelivered and forgets
// it. w.mu held.
func (ep *endpoint) dropRest(c *conn, err error) {
	w, n := &ep.w, ep.n
	it := w.restItem
	w.rest, w.restItem = nil, outItem{}
	n.undelivered(Undelivered{Peer: c.peerRef(), Envelope: it.envelope(n), TypeName: it.typeName(), Err: err})
}

// finishDirect writes the rest of a direct write's frame, if one is
// pending, under WriteTimeout as any write of the writer goroutine. On
// failure the envelope is reported Undelivered and the error returned (the
// caller closes the connection). w.mu held.
func (ep *endpoint) finishDirect(c *conn) error {
	w, n := &ep.w, ep.n
	if w.rest == nil {
		return nil
	}
	_ = c.raw.SetWriteDeadline(time.Now().Add(n.cfg.WriteTimeout))
	if _, err := c.raw.Write(w.rest); err != nil {
		c.writeFailed.Store(true)
		err = fmt.Errorf("%w: write: %w", ErrConnectionLost, err)
		ep.dropRest(c, err)
		return err
	}
	w.rest, w.restItem = nil, outItem{}
	w.hb.written()
	n.stats.framesSent.Add(1)
	n.stats.envelopesSent.Add(1)
	return nil
}

// tryDirect writes it on the sending goroutine when the connection is idle,
// saving the hand-off to the writer goroutine (a thread wake-up, which is
// most of a remote round trip's cost on an otherwise idle link). It reports
// whether it took the envelope: false leaves it to the queue, untouched;
// true with a nil error means it was written, and true with an error means
// the write failed: the connection is closed and the caller reports the
// envelope Undelivered with that error (it may or may not have arrived).
//
// It writes only when all of these hold, and otherwise returns false:
//
//   - Nothing is queued, held or being written (the queue's count is 0,
//     checked under mu, and the writer goroutine releases its items under
//     mu after writing them): every envelope sent before this one is
//     already written, so the order of Send is kept.
//   - No one else is writing (TryLock; a sender never waits for mu).
//   - The stream is kernel-buffered (directCapable), the connection is
//     established and open, and the encoded frame is at most
//     directMaxFrame bytes.
//   - A frame has arrived from the peer since the last direct write. This
//     is what keeps a stream of sends on the writer goroutine, which
//     batches many envelopes into one write: request/response traffic
//     (an answer arrives between two sends) is written directly; a burst
//     of one-way sends is written directly once, then queued and batched.
//   - No earlier direct write's frame is still being finished by the
//     writer goroutine (rest).
//
// Blocking. A write can find the socket's send buffer full. With nothing
// queued the
// writer goroutine had drained everything, and a frame of at most
// directMaxFrame bytes fits the send buffer unless the peer stopped
// reading with it already full. On a TCP or Unix socket (nowWriter) the
// sender does not wait: what did not fit is handed to the writer
// goroutine, which finishes the frame before anything else (under
// WriteTimeout, as every write of it), and the envelope counts as taken.
// Under TLS the write waits at most directWait, then the connection is
// closed and the envelope reported Undelivered. Only the goroutine holding
// mu can be in that wait; the others find mu taken and queue.
func (ep *endpoint) tryDirect(it *outItem) (bool, error) {
	q, w := ep.q, &ep.w
	// A first look without the lock: a stream of one-way sends stops here
	// (no frame in since the last direct write), without touching mu,
	// which the writer goroutine takes for every batch.
	if q.count.Load() != 0 || it.size > directMaxFrame {
		return false, nil
	}
	if c := w.direct.Load(); c == nil || c.framesIn.Load() == w.lastIn.Load() || !w.mu.TryLock() {
		return false, nil
	}
	defer w.mu.Unlock()
	c := w.direct.Load()
	if c == nil || q.count.Load() != 0 || c.isClosed() || w.rest != nil {
		return false, nil
	}
	in := c.framesIn.Load()
	if in == w.lastIn.Load() {
		return false, nil
	}
	env, maxLen, err := ep.encode(it, c.maxFrame(ep.n.cfg.MaxFrameSize))
	if err != nil {
		return false, nil // the writer goroutine reports it, as for any envelope
	}
	if maxLen > directMaxFrame-frameHeaderSize {
		return false, nil
	}
	n := ep.n
	frame := appendFrameHeader(ep.frame[:0], kindEnvelopes, 0)
	frame = w.e.append(frame, &env)
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(frame)-frameHeaderSize))
	ep.frame = frame[:0]
	w.lastIn.Store(in)
	var k int
	if w.now != nil {
		k, err = w.now.write(frame)
		if err == nil || (k == 0 && errors.Is(err, os.ErrDeadlineExceeded)) {
			// The deadline is the writer goroutine's, passed meanwhile:
			// its next write sets a new one.
			ep.directWritten(it, frame[k:])
			return true, nil
		}
	} else {
		_ = c.raw.SetWriteDeadline(time.Now().Add(directWait))
		k, err = c.raw.Write(frame)
		if err == nil {
			ep.directWritten(it, nil)
			return true, nil
		}
	}
	if k == 0 && c.isClosed() {
		// The connection was closed (by its reader, say, at the end of
		// the stream) between the look above and this write, and nothing
		// of the frame went out (under TLS, no whole record): the envelope
		// is the queue's, as if the look had seen the close, and the
		// writer goroutine keeps it for the next connection. Failing the
		// Send would drop an envelope that was never written.
		// TestDirectWriteMeetsClosedConnection pins it.
		return false, nil
	}
	c.writeFailed.Store(true) // no close_notify under TLS: it would wait on this sender's goroutine
	switch {
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = fmt.Errorf("%w: direct write: no room in the send buffer for %v (the peer stopped reading)", ErrConnectionLost, directWait)
	default:
		err = fmt.Errorf("%w: write: %w", ErrConnectionLost, err)
	}
	n.closeConn(c, err)
	return true, err
}

// directWritten counts a direct write of it whose frame is written but
// for rest, which is handed to the writer goroutine (nil: none). w.mu held.
func (ep *endpoint) directWritten(it *outItem, rest []byte) {
	w, n := &ep.w, ep.n
	n.stats.directWrites.Add(1)
	if len(rest) == 0 {
		w.hb.written()
		n.stats.framesSent.Add(1)
		n.stats.envelopesSent.Add(1)
		return
	}
	w.restBuf = append(w.restBuf[:0], rest...)
	w.rest, w.restItem = w.restBuf, *it
	n.stats.directHandoffs.Add(1)
	select {
	case w.flush <- struct{}{}:
	default:
	}
}

// frameCounter counts the frames a connection's reader has read; only the
// reader adds.
type frameCounter struct{ atomic.Uint64 }

func (f *frameCounter) inc() { f.Store(f.Load() + 1) }
