package remote

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testnet"
)

// stallClaims keeps opening connections to node that say hello as claimed
// (a node ID and an address) and never complete the handshake, a new one
// every period, so that a handshake claiming that address is always
// pending. It returns after the first hello was answered (admitted); the
// attack stops when the test ends.
func stallClaims(t *testing.T, node, system, claimed string, period time.Duration) {
	t.Helper()
	open := func() net.Conn {
		c, err := net.Dial("tcp", node)
		if err != nil {
			return nil
		}
		_, _ = c.Write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: system, NodeID: "stalling", Address: claimed}).append(nil)))
		return c
	}
	first := open()
	require.NotNil(t, first)
	require.NoError(t, first.SetReadDeadline(time.Now().Add(waitTimeout)))
	kind, _, err := newHandshakeReader(first).next()
	require.NoError(t, err)
	require.Equal(t, kindWelcome, kind, "the stalled hello was admitted")

	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		conns := []net.Conn{first}
		defer func() {
			for _, c := range conns {
				_ = c.Close()
			}
		}()
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
				if c := open(); c != nil {
					conns = append(conns, c)
				}
			}
		}
	})
	t.Cleanup(func() { close(done); wg.Wait() })
}

// TestStalledInboundHandshakeDoesNotBlockDialing: a handshake that claims
// B's address and never completes, renewed before each one times out, must
// not keep A from dialing B for longer than the handshake timeout.
func TestStalledInboundHandshakeDoesNotBlockDialing(t *testing.T) {
	cfg := testConfig()
	cfg.HandshakeTimeout = 300 * time.Millisecond
	a, ra := startNode(t, cfg)
	b, rb := startNode(t, testConfig())
	stallClaims(t, a.Address(), cfg.SystemName, b.Address(), cfg.HandshakeTimeout/3)

	start := time.Now()
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(1)}))
	rb.waitUntil(t, "delivery despite the stalled handshakes", func(r *recorder) bool { return len(r.delivered) == 1 })
	t.Logf("delivered after %v (handshake timeout %v)", time.Since(start).Round(time.Millisecond), cfg.HandshakeTimeout)
	assert.Equal(t, a.NodeID(), rb.delivered[0].From.NodeID)
	assert.Empty(t, ra.undelivered)
}

// TestStalledInboundHandshakeDoesNotStopGiveUp: the same attack on the
// address of a peer that is down: the give-up clock runs and the queued
// envelope becomes Undelivered with ErrPeerUnreachable.
func TestStalledInboundHandshakeDoesNotStopGiveUp(t *testing.T) {
	down := testnet.ClosedAddress(t)

	cfg := testConfig()
	cfg.HandshakeTimeout = 300 * time.Millisecond
	cfg.GiveUpAfter = 500 * time.Millisecond
	a, ra := startNode(t, cfg)
	stallClaims(t, a.Address(), cfg.SystemName, down, cfg.HandshakeTimeout/3)

	require.NoError(t, a.Send(down, Envelope{Target: PIDRef{down, "x"}, Message: ping(1)}))
	ra.waitUntil(t, "give-up despite the stalled handshakes", func(r *recorder) bool { return len(r.terminated) == 1 })
	assert.ErrorIs(t, ra.terminated[0].Reason, ErrPeerUnreachable)
	ra.waitUntil(t, "queued envelope undelivered", func(r *recorder) bool { return len(r.undelivered) == 1 })
	assert.ErrorIs(t, ra.undelivered[0].Err, ErrPeerUnreachable)
}
