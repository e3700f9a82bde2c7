package remote

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawClient speaks the wire protocol by hand, to send what a correct node
// never would.
type rawClient struct {
	t  *testing.T
	c  net.Conn
	fr *frameReader
}

func dialRaw(t *testing.T, addr string) *rawClient {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	require.NoError(t, c.SetDeadline(time.Now().Add(waitTimeout)))
	return &rawClient{t: t, c: c, fr: newFrameReader(c, MaxFrameSize)}
}

func (r *rawClient) local() string { return r.c.LocalAddr().String() }

func (r *rawClient) write(b []byte) {
	r.t.Helper()
	_, err := r.c.Write(b)
	require.NoError(r.t, err)
}

// handshake completes a valid handshake as node id at addr.
func (r *rawClient) handshake(system, id, addr string) hello {
	r.t.Helper()
	r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: system, NodeID: id, Address: addr}).append(nil)))
	kind, body, err := r.fr.next()
	require.NoError(r.t, err)
	require.Equal(r.t, kindWelcome, kind)
	h, err := decodeHello(body)
	require.NoError(r.t, err)
	r.write(appendFrame(nil, kindAck, nil))
	return h
}

// expectReject reads a reject frame with code, then the end of the stream.
func (r *rawClient) expectReject(code RejectCode) {
	r.t.Helper()
	kind, body, err := r.fr.next()
	require.NoError(r.t, err)
	require.Equal(r.t, kindReject, kind)
	rej := decodeReject(body)
	assert.Equal(r.t, code, rej.Code, "reason: %s", rej.Reason)
	r.expectClosed()
}

// expectClosed reads until the node closes the connection.
func (r *rawClient) expectClosed() {
	r.t.Helper()
	for {
		_, _, err := r.fr.next()
		if err == nil {
			continue // heartbeats
		}
		if errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return
		}
		r.t.Fatalf("expected the node to close the connection, got %v", err)
	}
}

// waitEventFrom waits for an event of kind for the socket whose remote end
// is remote.
func (r *recorder) waitEventFrom(t *testing.T, remote string, kind EventKind, target error) Event {
	t.Helper()
	var got Event
	r.waitUntil(t, kind.String()+" from "+remote, func(r *recorder) bool {
		for _, e := range r.events {
			if e.Kind == kind && e.RemoteAddr == remote {
				got = e
				return true
			}
		}
		return false
	})
	require.ErrorIs(t, got.Err, target, "event %v", got)
	return got
}

// TestBadInput sends each kind of bad input to a node and checks that it is
// refused with an event, that only that connection closes, and that the
// node keeps serving a healthy peer over its existing connection.
func TestBadInput(t *testing.T) {
	cfg := testConfig()
	cfg.MaxFrameSize = 64 << 10
	b, rb := startNode(t, cfg)
	a, _ := startNode(t, testConfig())
	addr := b.Address()
	served := 0
	checkServing := func(t *testing.T) {
		t.Helper()
		served++
		require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "ok"}, Message: ping(uint64(served))}))
		rb.waitUntil(t, "healthy delivery", func(r *recorder) bool {
			for _, d := range r.delivered {
				if d.From.NodeID == a.NodeID() && d.Env.Message.(*Ping).Seq == uint64(served) {
					return true
				}
			}
			return false
		})
	}
	checkServing(t)

	header := func(version byte, kind frameKind, n uint32) []byte {
		h := []byte{magic0, magic1, version, byte(kind), 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint32(h[5:], n)
		return h
	}
	helloFrom := func(system, id, address string) []byte {
		return appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: system, NodeID: id, Address: address}).append(nil))
	}

	handshakeCases := []struct {
		name string
		send []byte
		want error
		code RejectCode
	}{
		{"garbage bytes", []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), ErrMalformed, RejectMalformed},
		{"truncated frame", append(header(ProtocolVersion, kindHello, 100), make([]byte, 10)...), ErrTruncated, RejectMalformed},
		{"oversize frame", header(ProtocolVersion, kindHello, uint32(cfg.MaxFrameSize)+1), ErrFrameTooLarge, RejectMalformed},
		{"wrong protocol version", header(ProtocolVersion+1, kindHello, 0), ErrBadVersion, RejectVersion},
		{"wrong hello version", appendFrame(nil, kindHello, (&hello{Version: 9, SystemName: cfg.SystemName, NodeID: "x", Address: "x:1"}).append(nil)), ErrBadVersion, RejectVersion},
		{"wrong cluster name", helloFrom("other-cluster", "intruder", "10.0.0.1:1"), ErrClusterMismatch, RejectCluster},
		{"our own node id", helloFrom(cfg.SystemName, b.NodeID(), "10.0.0.1:1"), ErrIdentityMismatch, RejectIdentity},
		{"envelopes before hello", appendFrame(nil, kindEnvelopes, []byte{0}), ErrMalformed, RejectMalformed},
		{"malformed hello", appendFrame(nil, kindHello, []byte{1, 200}), ErrMalformed, RejectMalformed},
	}
	for _, tc := range handshakeCases {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, addr)
			r.write(tc.send)
			if tc.name == "truncated frame" {
				require.NoError(t, r.c.(*net.TCPConn).CloseWrite())
			}
			rb.waitEventFrom(t, r.local(), EventHandshakeRefused, tc.want)
			r.expectReject(tc.code)
			checkServing(t)
		})
	}

	t.Run("reject instead of ack", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.write(helloFrom(cfg.SystemName, "peer-x", "10.0.0.2:1"))
		kind, _, err := r.fr.next()
		require.NoError(t, err)
		require.Equal(t, kindWelcome, kind)
		r.write(appendFrame(nil, kindReject, appendReject(nil, RejectCluster, "changed my mind")))
		e := rb.waitEventFrom(t, r.local(), EventHandshakeRefused, ErrClusterMismatch)
		var rej *RejectError
		require.ErrorAs(t, e.Err, &rej)
		assert.Equal(t, "changed my mind", rej.Reason)
		r.expectClosed()
		checkServing(t)
	})

	established := []struct {
		name string
		send func(r *rawClient, peerAddr string) []byte
		want error
	}{
		{"garbage after handshake", func(*rawClient, string) []byte { return []byte("\x00\x01garbage-garbage") }, ErrMalformed},
		{"oversize frame after handshake", func(*rawClient, string) []byte {
			return header(ProtocolVersion, kindEnvelopes, uint32(cfg.MaxFrameSize)+1)
		}, ErrFrameTooLarge},
		{"malformed envelope", func(*rawClient, string) []byte { return appendFrame(nil, kindEnvelopes, []byte{0x80}) }, ErrMalformed},
		{"second hello", func(*rawClient, string) []byte { return helloFrom(cfg.SystemName, "again", "10.0.0.3:1") }, ErrMalformed},
	}
	for i, tc := range established {
		t.Run(tc.name, func(t *testing.T) {
			r := dialRaw(t, addr)
			peerAddr := "10.0.1." + string(rune('1'+i)) + ":1"
			r.handshake(cfg.SystemName, "raw-"+tc.name, peerAddr)
			r.write(tc.send(r, peerAddr))
			rb.waitEventFrom(t, r.local(), EventProtocolError, tc.want)
			r.expectClosed()
			checkServing(t)
		})
	}

	t.Run("unregistered message type", func(t *testing.T) {
		r := dialRaw(t, addr)
		r.handshake(cfg.SystemName, "raw-types", "10.0.2.1:1")
		enc := newEnvelopeEncoder("10.0.2.1:1", addr)
		bad := enc.append(nil, &wireEnvelope{target: PIDRef{addr, "t"}, serializer: SerializerJSON, typeName: "not.Registered", payload: []byte(`{}`)})
		r.write(appendFrame(nil, kindEnvelopes, bad))
		rb.waitUntil(t, "unknown-type event", func(r *recorder) bool {
			for _, u := range r.undelivered {
				if u.Inbound && u.TypeName == "not.Registered" {
					return true
				}
			}
			return false
		})
		ev := rb.waitEvent(t, EventUnknownType, ErrUnknownType)
		assert.Equal(t, "raw-types", ev.Peer.NodeID)
		// The connection stays up: a good envelope on it is delivered.
		good := enc.append(nil, &wireEnvelope{target: PIDRef{addr, "t"}, serializer: SerializerSystem, payload: []byte{sysPing, 42}})
		r.write(appendFrame(nil, kindEnvelopes, good))
		rb.waitUntil(t, "delivery after unknown type", func(r *recorder) bool {
			for _, d := range r.delivered {
				if d.From.NodeID == "raw-types" {
					return assert.Equal(t, ping(42), d.Env.Message)
				}
			}
			return false
		})
		checkServing(t)
	})

	// The healthy peer's connection survived everything above.
	for _, e := range rb.snapshotEvents() {
		if e.Kind == EventDisconnected {
			assert.NotEqual(t, a.NodeID(), e.Peer.NodeID, "the healthy peer was disconnected: %v", e)
		}
	}
	assert.Equal(t, int64(1), a.Stats().Connections)
	assert.Positive(t, b.Stats().HandshakesRefused)
	assert.Positive(t, b.Stats().ProtocolErrors)
}

func TestHandshakeTimeout(t *testing.T) {
	cfg := testConfig()
	cfg.HandshakeTimeout = 100 * time.Millisecond
	b, rb := startNode(t, cfg)
	r := dialRaw(t, b.Address()) // says nothing
	ev := rb.waitEventFrom(t, r.local(), EventHandshakeRefused, ErrHandshake)
	assert.ErrorIs(t, ev.Err, os.ErrDeadlineExceeded)
	r.expectClosed()
}

func TestHeartbeatTimeoutClosesSilentPeer(t *testing.T) {
	cfg := testConfig()
	cfg.HeartbeatInterval = 20 * time.Millisecond
	cfg.HeartbeatTimeout = 150 * time.Millisecond
	b, rb := startNode(t, cfg)
	r := dialRaw(t, b.Address())
	r.handshake(cfg.SystemName, "silent", "10.9.9.9:1")
	// The raw client never answers: b gives up on it after the timeout.
	rb.waitUntil(t, "silent peer dropped", func(r *recorder) bool {
		for _, e := range r.events {
			if e.Kind == EventDisconnected && e.Peer.NodeID == "silent" && errors.Is(e.Err, ErrConnectionLost) {
				return true
			}
		}
		return false
	})
	r.expectClosed()
}

// TestFailedHandshakesLeaveNoEndpoints: hellos that pass the checks but
// never complete (no ack) must not pile up idle endpoints.
func TestFailedHandshakesLeaveNoEndpoints(t *testing.T) {
	cfg := testConfig()
	b, rb := startNode(t, cfg)
	for i := range 20 {
		r := dialRaw(t, b.Address())
		r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: cfg.SystemName, NodeID: "ghost", Address: "10.7.7.7:" + itoa10(i)}).append(nil)))
		kind, _, err := r.fr.next()
		require.NoError(t, err)
		require.Equal(t, kindWelcome, kind)
		require.NoError(t, r.c.Close()) // no ack
		rb.waitEventFrom(t, r.local(), EventHandshakeRefused, ErrHandshake)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	assert.Empty(t, b.endpoints)
}

func itoa10(i int) string { return strconv.Itoa(i + 1) }
