package remote

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// TestCloseWhileSendingLosesNothing: senders on several goroutines send to
// a healthy peer over loopback TCP while another goroutine closes the
// sending Node. Every envelope Send accepted (returned nil for) is either
// delivered at the peer or reported Undelivered at the sender, exactly
// once; every envelope Send refused is reported Undelivered and not
// delivered; Send after Close fails with ErrStopped; and Close finishes
// gracefully, well before its context's deadline and the connection's
// WriteTimeout and HeartbeatTimeout, since the peer reads.
//
// Cases: Close after a few thousand sends (connection busy), Close at the
// first accepted send (racing the dial and handshake), and a peer that
// answers every envelope (frames flow back, so senders also write
// directly, and the sender has unread input when it closes).
func TestCloseWhileSendingLosesNothing(t *testing.T) {
	for _, tc := range []struct {
		name       string
		closeAfter int64 // accepted sends before Close begins
		replies    bool
	}{
		{"busy", 2000, false},
		{"first-send", 1, false},
		{"replies", 500, true},
	} {
		t.Run(tc.name, func(t *testing.T) { testCloseWhileSending(t, tc.closeAfter, tc.replies) })
	}
}

func testCloseWhileSending(t *testing.T, closeAfter int64, replies bool) {
	const (
		senders    = 6
		perSender  = 20000
		closeBound = 5 * time.Second
	)
	cfg := testConfig()
	// Long socket timeouts: a Close that waits for one of them shows up as
	// a Close that misses closeBound.
	cfg.WriteTimeout = 30 * time.Second
	cfg.HeartbeatTimeout = 30 * time.Second
	sink, rs := startNode(t, cfg)
	if replies {
		rs.onDeliver = func(from Peer, env Envelope) {
			_ = sink.Send(from.Address, Envelope{Target: env.Sender, Message: &Pong{Seq: env.Message.(*Ping).Seq}})
		}
	}
	srcCfg := cfg
	srcCfg.OutboundQueueSize = senders * perSender
	src, ra := startNode(t, srcCfg)
	to := sink.Address()

	// Each envelope's Seq is unique: sender g sends g*perSender+i.
	var (
		accepted  [senders * perSender]atomic.Bool
		refused   [senders * perSender]atomic.Bool
		nAccepted atomic.Int64
		closeNow  = make(chan struct{})
		closeOnce sync.Once
		wg        sync.WaitGroup
	)
	for g := range senders {
		wg.Go(func() {
			for i := range perSender {
				seq := uint64(g*perSender + i)
				err := src.Send(to, Envelope{Target: PIDRef{to, "sink"}, Sender: PIDRef{src.Address(), fmt.Sprintf("g%d", g)}, Message: ping(seq)})
				if err != nil {
					refused[seq].Store(true)
					if errors.Is(err, ErrStopped) {
						return
					}
					continue
				}
				accepted[seq].Store(true)
				if nAccepted.Add(1) == closeAfter {
					closeOnce.Do(func() { close(closeNow) })
				}
			}
		})
	}
	var (
		closeErr     error
		closeElapsed time.Duration
		closed       = make(chan struct{})
	)
	go func() {
		defer close(closed)
		<-closeNow
		ctx, cancel := context.WithTimeout(context.Background(), closeBound)
		defer cancel()
		start := time.Now()
		closeErr = src.Close(ctx)
		closeElapsed = time.Since(start)
	}()
	wg.Wait()
	closeOnce.Do(func() { close(closeNow) }) // in case fewer than closeAfter were accepted
	<-closed
	require.NoError(t, closeErr, "Close with a healthy peer finishes within its context (took %v)", closeElapsed)
	assert.Less(t, closeElapsed, closeBound)

	err := src.Send(to, Envelope{Target: PIDRef{to, "sink"}, Message: ping(senders * perSender)})
	require.ErrorIs(t, err, ErrStopped, "Send after Close")

	// Close has returned: every report at the sender is in. The peer
	// delivers what it read before the goodbye; wait until it has
	// delivered everything that was not reported undelivered.
	want := int(nAccepted.Load())
	undeliveredAccepted := func() int {
		ra.mu.Lock()
		defer ra.mu.Unlock()
		k := 0
		for _, u := range ra.undelivered {
			if p, ok := u.Envelope.Message.(*Ping); ok && p.Seq < senders*perSender && accepted[p.Seq].Load() {
				k++
			}
		}
		return k
	}
	lost := undeliveredAccepted()
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for {
		rs.mu.Lock()
		got, ch := len(rs.delivered), rs.changed
		rs.mu.Unlock()
		if got+lost >= want {
			break
		}
		select {
		case <-ch:
			continue
		case <-deadline.C:
		}
		for _, e := range rs.snapshotEvents() {
			t.Logf("sink event: %v %s in=%v %v", e.Kind, e.RemoteAddr, e.Inbound, e.Err)
		}
		for _, e := range ra.snapshotEvents() {
			t.Logf("src event: %v %s in=%v %v", e.Kind, e.RemoteAddr, e.Inbound, e.Err)
		}
		ra.mu.Lock()
		for i, u := range ra.undelivered {
			if i < 20 {
				t.Logf("src undelivered: %v %v", u.Envelope.Message, u.Err)
			}
		}
		ra.mu.Unlock()
		rs.mu.Lock()
		got2 := map[uint64]bool{}
		for _, d := range rs.delivered {
			got2[d.Env.Message.(*Ping).Seq] = true
		}
		rs.mu.Unlock()
		for seq, shown := 0, 0; seq < senders*perSender && shown < 20; seq++ {
			if accepted[seq].Load() && !got2[uint64(seq)] {
				shown++
				t.Logf("missing %d (sender %d, #%d)", seq, seq/perSender, seq%perSender)
			}
		}
		t.Logf("src stats %+v; sink stats %+v; sink undelivered %d", src.Stats(), sink.Stats(), len(rs.undelivered))
		t.Fatalf("envelopes lost: %d accepted, %d delivered, %d reported undelivered (Close took %v)", want, got, lost, closeElapsed)
	}
	// The peer has closed every connection from src: nothing more arrives.
	rs.waitUntil(t, "the peer's connections from src closed", func(r *recorder) bool {
		up := 0
		for _, e := range r.events {
			if e.Peer.NodeID != src.NodeID() {
				continue
			}
			switch e.Kind {
			case EventConnected:
				up++
			case EventDisconnected:
				up--
			}
		}
		return up == 0
	})

	// Exactly once, and refusals are never delivered.
	seen := make([]uint8, senders*perSender)
	rs.mu.Lock()
	for _, d := range rs.delivered {
		seen[d.Env.Message.(*Ping).Seq]++
	}
	rs.mu.Unlock()
	ra.mu.Lock()
	for _, u := range ra.undelivered {
		if p, ok := u.Envelope.Message.(*Ping); ok && p.Seq < senders*perSender {
			seen[p.Seq] += 2
		}
	}
	ra.mu.Unlock()
	bad := 0
	for seq, s := range seen {
		switch {
		case accepted[seq].Load() && s != 1 && s != 2:
			bad++
			if bad <= 5 {
				t.Errorf("accepted envelope %d: delivered %d times, reported undelivered %d times", seq, s&1, s>>1)
			}
		case refused[seq].Load() && s != 2:
			bad++
			if bad <= 5 {
				t.Errorf("refused envelope %d: delivered %d times, reported undelivered %d times", seq, s&1, s>>1)
			}
		case !accepted[seq].Load() && !refused[seq].Load() && s != 0:
			t.Errorf("envelope %d was never sent but was seen", seq)
		}
	}
	require.Zero(t, bad)
	t.Logf("accepted %d, delivered %d, undelivered %d, Close took %v", want, rs.countDelivered(), lost, closeElapsed)
}

// TestCloseBoundedWhenPeerStaysOpen: after its goodbye a closing Node reads
// on until the peer closes the connection, but a peer that reads the
// goodbye and keeps the connection open holds Close only for the probe
// timeout (HandshakeTimeout here), or until Close's context ends, never for
// WriteTimeout or HeartbeatTimeout.
func TestCloseBoundedWhenPeerStaysOpen(t *testing.T) {
	for _, tc := range []struct {
		name      string
		handshake time.Duration // the probe timeout, as configured
		ctx       time.Duration // Close's context
		wantErr   error
	}{
		{"probe-timeout", 300 * time.Millisecond, waitTimeout, nil},
		{"context", waitTimeout, 300 * time.Millisecond, context.DeadlineExceeded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.HandshakeTimeout = tc.handshake
			cfg.HeartbeatInterval = 20 * time.Millisecond
			cfg.WriteTimeout = time.Minute
			cfg.HeartbeatTimeout = time.Minute
			rec := newRecorder()
			b, err := NewNode(cfg, rec.hooks())
			require.NoError(t, err)
			require.NoError(t, b.Start(context.Background()))
			t.Cleanup(func() { _ = b.Close(context.Background()) })
			r := dialRaw(t, b.Address())
			r.handshake(cfg.SystemName, "stays-open", "10.9.9.9:1")
			rec.waitEvent(t, EventConnected, nil)

			ctx, cancel := context.WithTimeout(context.Background(), tc.ctx)
			defer cancel()
			start := time.Now()
			closeErr := make(chan error, 1)
			go func() { closeErr <- b.Close(ctx) }()
			// The goodbye arrives (after any heartbeats); the raw peer keeps
			// the connection open.
			for {
				kind, _, err := r.fr.next()
				require.NoError(t, err)
				if kind == kindGoodbye {
					break
				}
			}
			err = <-closeErr
			elapsed := time.Since(start)
			if tc.wantErr == nil {
				require.NoError(t, err)
				ev := rec.waitEvent(t, EventDisconnected, ErrConnectionLost)
				assert.ErrorContains(t, ev.Err, "did not close")
			} else {
				require.ErrorIs(t, err, tc.wantErr)
			}
			assert.Less(t, elapsed, 10*time.Second, "bounded by %v", min(tc.handshake, tc.ctx))
			assert.GreaterOrEqual(t, elapsed, min(tc.handshake, tc.ctx)/2, "Close waited for the peer to close")
			r.expectClosed()
		})
	}
}

// TestCloseWaitsForPeerToClose: a peer that still sends after our goodbye
// (it wrote before it read the goodbye) has what it sent delivered, and
// the connection ends when the peer closes it.
func TestCloseWaitsForPeerToClose(t *testing.T) {
	cfg := testConfig()
	rec := newRecorder()
	b, err := NewNode(cfg, rec.hooks())
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	r := dialRaw(t, b.Address())
	r.handshake(cfg.SystemName, "late-sender", "10.9.9.9:1")
	rec.waitEvent(t, EventConnected, nil)

	closeErr := make(chan error, 1)
	go func() { closeErr <- b.Close(context.Background()) }()
	for {
		kind, _, err := r.fr.next()
		require.NoError(t, err)
		if kind == kindGoodbye {
			break
		}
	}
	enc := newEnvelopeEncoder("10.9.9.9:1", b.Address())
	codec, err := b.Serializers().codecFor(ping(7))
	require.NoError(t, err)
	payload, err := codec.encode(nil, ping(7))
	require.NoError(t, err)
	w := wireEnvelope{target: PIDRef{b.Address(), "x"}, serializer: codec.ser, typeName: codec.name, payload: payload}
	frame := appendFrameHeader(nil, kindEnvelopes, 0)
	frame = enc.append(frame, &w)
	binary.BigEndian.PutUint32(frame[5:9], uint32(len(frame)-frameHeaderSize))
	r.write(frame)
	rec.waitUntil(t, "the late envelope delivered", func(r *recorder) bool { return len(r.delivered) == 1 })
	select {
	case err := <-closeErr:
		t.Fatalf("Close returned (%v) while the peer kept the connection open", err)
	default:
	}
	require.NoError(t, r.c.Close())
	require.NoError(t, <-closeErr)
	ev := rec.waitEvent(t, EventDisconnected, nil)
	assert.ErrorIs(t, ev.Err, ErrStopped, "the peer closed after our goodbye: a normal end")
	assert.Equal(t, &Ping{Seq: 7}, rec.delivered[0].Env.Message)
}

// dialCounter is a TCPTransport that counts its dials.
type dialCounter struct {
	TCPTransport
	dials atomic.Int32
}

func (d *dialCounter) Dial(ctx context.Context, address string) (net.Conn, error) {
	d.dials.Add(1)
	return d.TCPTransport.Dial(ctx, address)
}

// TestCloseNoSecondConnectionAfterGoodbye: an envelope queued after the
// goodbye was written (by a sender that took the endpoint just before
// Close began, as in TestCloseWhileSendingLosesNothing) is reported
// Undelivered with ErrStopped; the closing node does not open another
// connection to flush it, which would race the peer's own reaction to the
// goodbye and could lose it without a report.
func TestCloseNoSecondConnectionAfterGoodbye(t *testing.T) {
	cfg := testConfig()
	tr := &dialCounter{}
	rec := newRecorder()
	b, err := NewNode(cfg, rec.hooks(), WithTransport(tr))
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Close(context.Background()) })
	const peerAddr = "127.0.0.1:1" // the raw peer's claimed address: a dial there would be counted
	r := dialRaw(t, b.Address())
	r.handshake(cfg.SystemName, "peer", peerAddr)
	rec.waitEvent(t, EventConnected, nil)
	b.mu.Lock()
	ep := b.endpoints[peerAddr]
	b.mu.Unlock()
	require.NotNil(t, ep)

	closeErr := make(chan error, 1)
	go func() { closeErr <- b.Close(context.Background()) }()
	for {
		kind, _, err := r.fr.next()
		require.NoError(t, err)
		if kind == kindGoodbye {
			break
		}
	}
	// A late sender's envelope, after the goodbye (Send itself refuses
	// once Close began; this is the sender that got past that check).
	codec, err := b.ser.codecFor(ping(9))
	require.NoError(t, err)
	require.NoError(t, ep.enqueue(outItem{target: actor.NewPID(peerAddr, "x"), msg: ping(9), codec: codec, size: codec.estimate(ping(9))}))
	require.NoError(t, r.c.Close())
	require.NoError(t, <-closeErr)

	assert.Zero(t, tr.dials.Load(), "no connection opened after the goodbye")
	rec.mu.Lock()
	defer rec.mu.Unlock()
	require.Len(t, rec.undelivered, 1)
	assert.Equal(t, ping(9), rec.undelivered[0].Envelope.Message)
	assert.ErrorIs(t, rec.undelivered[0].Err, ErrStopped)
}
