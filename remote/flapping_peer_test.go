package remote

import (
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// deadlineClock is a manual clock that reports the deadline of every
// timer set on it.
type deadlineClock struct {
	*scheduler.ManualClock
	deadlines chan time.Time
}

func (c *deadlineClock) AfterFunc(d time.Duration, f func()) func() bool {
	select {
	case c.deadlines <- c.Now().Add(d):
	default:
	}
	return c.ManualClock.AfterFunc(d, f)
}

// flappingPeer listens on loopback and completes every handshake as node
// "flap", then closes the connection at once. Each connection is reported
// on the returned channel once closed.
func flappingPeer(t *testing.T, system string) (string, <-chan struct{}) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	welcome := appendFrame(nil, kindWelcome, (&hello{Version: ProtocolVersion, SystemName: system, NodeID: "flap", Address: addr}).append(nil))
	closed := make(chan struct{}, 1024)
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(waitTimeout))
			fr := newHandshakeReader(c)
			if _, _, err := fr.next(); err == nil { // hello
				if _, err := c.Write(welcome); err == nil {
					_, _, _ = fr.next() // ack
				}
			}
			_ = c.Close()
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() { _ = ln.Close(); wg.Wait() })
	return addr, closed
}

// TestFlappingPeerBacksOff: a peer that completes each handshake and
// closes the connection at once is redialled at once after the first
// loss, then only after backoff waits that grow. Before, every loss was
// followed by an immediate redial: some 25,000 connections in 2 s on
// loopback, for as long as the peer went on.
func TestFlappingPeerBacksOff(t *testing.T) {
	cfg := testConfig()
	cfg.ReconnectBackoffMin = time.Minute
	cfg.ReconnectBackoffMax = time.Hour
	cfg.GiveUpAfter = 24 * time.Hour
	cfg.HeartbeatInterval = 2 * time.Hour // its timers are told apart from the backoff's by their length
	cfg.HeartbeatTimeout = 3 * time.Hour
	start := time.Now()
	clock := &deadlineClock{ManualClock: scheduler.NewManualClock(start), deadlines: make(chan time.Time, 1024)}
	a, _ := startNode(t, cfg, WithClock(clock))
	a.rand = constRand{} // each wait is its whole step
	addr, closed := flappingPeer(t, cfg.SystemName)

	require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(1)}))
	// backoffUntil waits for the end of the endpoint's next backoff wait
	// (a wait may be armed again for the same end after a wake-up); the
	// peer must not see more than maxConns connections by then.
	conns := 0
	var last time.Time
	backoffUntil := func(maxConns int) time.Time {
		t.Helper()
		timeout := time.After(waitTimeout)
		for {
			select {
			case <-closed:
				if conns++; conns > maxConns {
					t.Fatalf("connection %d to a peer that closes each at once, without a backoff wait", conns)
				}
			case at := <-clock.deadlines:
				if at.After(last) && at.Sub(clock.Now()) < cfg.HeartbeatInterval {
					last = at
					return at
				}
			case <-timeout:
				t.Fatalf("no backoff wait after %d connections", conns)
			}
		}
	}
	until := backoffUntil(2)
	assert.Equal(t, cfg.ReconnectBackoffMin, until.Sub(start), "the wait after the second flap in a row")
	for conns < 2 {
		<-closed
		conns++
	}
	clock.Advance(until.Sub(clock.Now()))
	next := backoffUntil(3)
	assert.Equal(t, 2*cfg.ReconnectBackoffMin, next.Sub(until), "the wait after the third flap in a row")
	for conns < 3 {
		<-closed
		conns++
	}
}
