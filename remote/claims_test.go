package remote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingTransport is TCP whose dials are counted; with refuse set they
// fail at once instead of dialing.
type countingTransport struct {
	TCPTransport
	dials  atomic.Int64
	refuse bool
}

func (t *countingTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	t.dials.Add(1)
	if t.refuse {
		return nil, errors.New("test: dial refused")
	}
	return t.TCPTransport.Dial(ctx, address)
}

// claim sends a hello claiming node id at addr and returns the kind of the
// node's answer (welcome: acked; reject: its code).
func (r *rawClient) claim(id, addr string) (frameKind, RejectCode) {
	r.t.Helper()
	r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: id, Address: addr}).append(nil)))
	kind, body, err := r.fr.next()
	require.NoError(r.t, err)
	switch kind {
	case kindWelcome:
		r.write(appendFrame(nil, kindAck, nil))
		return kind, 0
	case kindReject:
		return kind, decodeReject(body).Code
	}
	r.t.Fatalf("unexpected %v frame", kind)
	return 0, 0
}

// TestInboundClaimsBounded: under plain TCP any party may claim any
// address in its hello. 100 claims of distinct addresses against a node
// with MaxInboundConnections 16: 16 are established, the rest refused
// (ErrTooManyConnections, reject code 8), so endpoints, connections and
// goroutines stay bounded. When the claimants leave, their endpoints are
// removed without a single redial, and new claims get in again.
// Before: 100 endpoints, 100 connections and 200 goroutines, then redials
// of every claimed address until GiveUpAfter.
func TestInboundClaimsBounded(t *testing.T) {
	const claims, limit = 100, 16
	cfg := testConfig()
	cfg.MaxInboundConnections = limit
	tr := &countingTransport{refuse: true}
	baseG := runtime.NumGoroutine()
	b, rb := startNode(t, cfg, WithTransport(tr))

	clients := make([]*rawClient, 0, claims)
	busy := 0
	for i := range claims {
		r := dialRaw(t, b.Address())
		kind, code := r.claim(fmt.Sprintf("claimer-%d", i), fmt.Sprintf("127.0.0.1:%d", 1000+i))
		if kind == kindReject {
			require.Equal(t, RejectBusy, code)
			r.expectClosed()
			busy++
			continue
		}
		clients = append(clients, r)
	}
	assert.Equal(t, limit, len(clients))
	assert.Equal(t, claims-limit, busy)
	ev := rb.waitEvent(t, EventHandshakeRefused, ErrTooManyConnections)
	assert.True(t, ev.Inbound)
	st := b.Stats()
	assert.Equal(t, int64(limit), st.Inbound)
	assert.Equal(t, limit, st.Endpoints)
	assert.Equal(t, uint64(claims-limit), st.InboundRefused)
	// Each established claim holds a reader and an endpoint goroutine;
	// the refused ones' goroutines end.
	bound := 2*limit + 8
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-baseG <= bound }, waitTimeout, time.Millisecond,
		"goroutines: %+d, bound %d", runtime.NumGoroutine()-baseG, bound)

	// The claimants leave: no redial, no termination report, nothing held.
	for _, r := range clients {
		require.NoError(t, r.c.Close())
	}
	rb.waitUntil(t, "every claimant's connection gone", func(r *recorder) bool { return countKind(r.events, EventDisconnected) == limit })
	require.Eventually(t, func() bool { st := b.Stats(); return st.Endpoints == 0 && st.Inbound == 0 }, waitTimeout, time.Millisecond)
	assert.Zero(t, tr.dials.Load(), "claimed addresses redialled")
	rb.mu.Lock()
	assert.Empty(t, rb.terminated)
	rb.mu.Unlock()

	// Room again.
	r := dialRaw(t, b.Address())
	kind, _ := r.claim("late", "127.0.0.1:999")
	assert.Equal(t, kindWelcome, kind)
}

// TestClaimantsLeaveNoRedial: 300 parties complete a handshake, each
// claiming its own address, and leave. The node removes each endpoint when
// its connection ends and dials none of the addresses. Before, every
// claimed address was redialled with backoff until GiveUpAfter: 2 000
// claims left 2 000 endpoints and ~150 000 dials in 14 s with these
// backoffs.
func TestClaimantsLeaveNoRedial(t *testing.T) {
	const claims = 300
	tr := &countingTransport{refuse: true}
	b, rb := startNode(t, testConfig(), WithTransport(tr))
	for i := range claims {
		r := dialRaw(t, b.Address())
		kind, _ := r.claim(fmt.Sprintf("claimer-%d", i), fmt.Sprintf("127.0.0.1:%d", 1000+i))
		require.Equal(t, kindWelcome, kind)
		require.NoError(t, r.c.Close())
	}
	rb.waitUntil(t, "every claimant's connection gone", func(r *recorder) bool { return countKind(r.events, EventDisconnected) == claims })
	require.Eventually(t, func() bool { return b.Stats().Endpoints == 0 }, waitTimeout, time.Millisecond,
		"endpoints left: %d", b.Stats().Endpoints)
	assert.Zero(t, tr.dials.Load(), "claimed addresses redialled")
	assert.Zero(t, b.Stats().Inbound)
}

// TestUsedInboundEndpointRedials: a peer dialled in, and this node sent to
// it: the endpoint is in use, so when the connection ends it is redialled
// as before (a request or watch over it must learn whether the peer is
// still there).
func TestUsedInboundEndpointRedials(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err == nil {
			accepted <- c
		}
	}()
	b, rb := startNode(t, testConfig())

	r := dialRaw(t, b.Address())
	kind, _ := r.claim("peer", ln.Addr().String())
	require.Equal(t, kindWelcome, kind)
	rb.waitEvent(t, EventConnected, nil)
	require.NoError(t, b.Send(ln.Addr().String(), Envelope{Target: PIDRef{ln.Addr().String(), "x"}, Message: ping(1)}))
	for { // the envelope arrives on the inbound connection
		kind, _, err := r.fr.next()
		require.NoError(t, err)
		if kind == kindEnvelopes {
			break
		}
	}
	require.NoError(t, r.c.Close())

	select {
	case c := <-accepted:
		_ = c.Close()
	case <-time.After(waitTimeout):
		t.Fatal("the endpoint in use was not redialled")
	}
	assert.Equal(t, 1, b.Stats().Endpoints)
}

// TestInboundCapAdmitsAPeerInUse: at MaxInboundConnections, a claim of an
// address this node has sent to still passes the bound (here it then meets
// the established connection: ErrDuplicateConnection), while a claim of any
// other address is refused as busy.
func TestInboundCapAdmitsAPeerInUse(t *testing.T) {
	cfg := testConfig()
	cfg.MaxInboundConnections = 1
	b, rb := startNode(t, cfg)
	const used = "127.0.0.1:1001"

	r1 := dialRaw(t, b.Address())
	kind, _ := r1.claim("peer", used)
	require.Equal(t, kindWelcome, kind)
	rb.waitEvent(t, EventConnected, nil)
	require.NoError(t, b.Send(used, Envelope{Target: PIDRef{used, "x"}, Message: ping(1)}))

	r2 := dialRaw(t, b.Address())
	kind, code := r2.claim("peer-again", used)
	require.Equal(t, kindReject, kind)
	assert.Equal(t, RejectDuplicate, code, "a claim of an address in use is not refused as busy")
	r2.expectClosed()
	require.Eventually(t, func() bool { return b.Stats().Inbound == 1 }, waitTimeout, time.Millisecond,
		"the refused claim still counted: %d inbound", b.Stats().Inbound)

	r3 := dialRaw(t, b.Address())
	kind, code = r3.claim("other", "127.0.0.1:1002")
	require.Equal(t, kindReject, kind)
	assert.Equal(t, RejectBusy, code)
	assert.Equal(t, uint64(1), b.Stats().InboundRefused)
}

// TestRetiredEndpointStillReportsRestart: an endpoint removed when its
// inbound-only connection ended leaves its peer's node ID behind, so that
// a new incarnation claiming the address is still reported as a restart of
// the old one (as when the endpoint stayed).
func TestRetiredEndpointStillReportsRestart(t *testing.T) {
	b, rb := startNode(t, testConfig())
	const addr = "127.0.0.1:1001"
	r := dialRaw(t, b.Address())
	kind, _ := r.claim("first", addr)
	require.Equal(t, kindWelcome, kind)
	rb.waitEvent(t, EventConnected, nil)
	require.NoError(t, r.c.Close())
	rb.waitEvent(t, EventDisconnected, nil)
	require.Eventually(t, func() bool { return b.Stats().Endpoints == 0 }, waitTimeout, time.Millisecond)

	r = dialRaw(t, b.Address())
	kind, _ = r.claim("second", addr)
	require.Equal(t, kindWelcome, kind)
	rb.waitUntil(t, "the restart reported", func(r *recorder) bool { return len(r.terminated) == 1 })
	rb.mu.Lock()
	defer rb.mu.Unlock()
	assert.Equal(t, Peer{Address: addr, NodeID: "first"}, rb.terminated[0].Peer)
	assert.ErrorIs(t, rb.terminated[0].Reason, ErrPeerRestarted)
}
