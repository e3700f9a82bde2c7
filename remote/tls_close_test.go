package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// closeBound is what the tests below allow a close on a stalled TLS peer:
// far below the 5 s that crypto/tls's Conn.Close waits for room for its
// close_notify alert, far above a close that waits for nothing, however
// loaded the machine.
const closeBound = 2 * time.Second

// stallConn is a TCP connection whose writes can be made to stall as on a
// send buffer that a peer which stopped reading has filled: a stalled
// Write writes nothing and waits for its write deadline (then fails as a
// timed-out socket write does) or for Close. Real sockets cannot be made
// to do that reliably: after a timed-out write Linux usually still takes
// a few bytes more (the writer waits for the buffer to be half empty, a
// new write needs one free byte), which is room for a close_notify.
type stallConn struct {
	net.Conn
	mu       sync.Mutex
	stalled  bool
	closed   bool
	deadline time.Time
	changed  chan struct{} // closed and replaced when one of the above changes
}

func newStallConn(c net.Conn) *stallConn { return &stallConn{Conn: c, changed: make(chan struct{})} }

func (s *stallConn) bumpLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *stallConn) stall() {
	s.mu.Lock()
	s.stalled = true
	s.bumpLocked()
	s.mu.Unlock()
}

func (s *stallConn) Write(b []byte) (int, error) {
	for {
		s.mu.Lock()
		stalled, closed, deadline, changed := s.stalled, s.closed, s.deadline, s.changed
		s.mu.Unlock()
		if closed {
			return 0, &net.OpError{Op: "write", Net: "tcp", Err: net.ErrClosed}
		}
		if !stalled {
			return s.Conn.Write(b)
		}
		if deadline.IsZero() {
			<-changed
			continue
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return 0, &net.OpError{Op: "write", Net: "tcp", Err: os.ErrDeadlineExceeded}
		}
		t := time.NewTimer(wait)
		select {
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

func (s *stallConn) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	s.deadline = t
	s.bumpLocked()
	s.mu.Unlock()
	return s.Conn.SetWriteDeadline(t)
}

func (s *stallConn) SetDeadline(t time.Time) error {
	if err := s.SetWriteDeadline(t); err != nil {
		return err
	}
	return s.Conn.SetReadDeadline(t)
}

func (s *stallConn) Close() error {
	s.mu.Lock()
	if !s.closed {
		s.closed = true
		s.bumpLocked()
	}
	s.mu.Unlock()
	return s.Conn.Close()
}

// stallTransport dials TLS over stallConns.
type stallTransport struct{ TCPTransport }

func (t *stallTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, err
	}
	sc := newStallConn(c)
	cfg := t.ClientTLS.Clone()
	cfg.ServerName = "127.0.0.1"
	tc := tls.Client(sc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = sc.Close()
		return nil, err
	}
	return tc, nil
}

// TestTLSCloseBoundedOnStalledPeer: a's TLS connection to p stalls as if p
// had stopped reading with a's send buffer full. However the connection
// then ends, its close does not wait the 5 s that crypto/tls gives its
// close_notify alert (closeStream): the disconnect is reported within
// closeBound, and Close(ctx) keeps to its context.
func TestTLSCloseBoundedOnStalledPeer(t *testing.T) {
	ca := newTestCA(t)
	setup := func(t *testing.T, writeTimeout time.Duration) (a, p *Node, ra *recorder) {
		cfg := mtlsConfig(t, ca, "127.0.0.1")
		cfg.WriteTimeout = writeTimeout
		cfg.HeartbeatInterval = 20 * time.Second // no heartbeats in the way
		cfg.HeartbeatTimeout = time.Minute
		tr := &stallTransport{TCPTransport{ServerTLS: cfg.ServerTLS, ClientTLS: cfg.ClientTLS}}
		a, ra = startNode(t, cfg, WithTransport(tr))
		p, rp := startNode(t, cfg)
		require.NoError(t, a.Send(p.Address(), Envelope{Target: PIDRef{p.Address(), "x"}, Message: ping(0)}))
		rp.waitUntil(t, "the first delivery", func(r *recorder) bool { return len(r.delivered) == 1 })
		// The connection that carried it (an earlier dial may have failed
		// under load).
		a.mu.Lock()
		ep := a.endpoints[p.Address()]
		a.mu.Unlock()
		require.NotNil(t, ep)
		ep.current().raw.(*tls.Conn).NetConn().(*stallConn).stall()
		return a, p, ra
	}

	t.Run("the writer's write times out", func(t *testing.T) {
		a, p, ra := setup(t, 300*time.Millisecond)
		require.NoError(t, a.Send(p.Address(), Envelope{Target: PIDRef{p.Address(), "x"}, Message: ping(1)}))
		var failedAt time.Time
		ra.waitUntil(t, "the writer's write to time out", func(r *recorder) bool {
			for _, u := range r.undelivered {
				if errors.Is(u.Err, ErrConnectionLost) && errors.Is(u.Err, os.ErrDeadlineExceeded) {
					failedAt = time.Now()
					return true
				}
			}
			return false
		})
		ev := ra.waitEvent(t, EventDisconnected, ErrConnectionLost)
		assert.Less(t, time.Since(failedAt), closeBound, "the close waited for the stalled peer: %v", ev.Err)
	})

	t.Run("Close's context ends while the writer's close waits", func(t *testing.T) {
		// Close starts as the write times out. Had the endpoint's goroutine
		// been left in a close_notify, the forced close at the end of
		// ctx could not have ended it (a second tls.Conn.Close closes
		// nothing).
		a, p, ra := setup(t, 300*time.Millisecond)
		require.NoError(t, a.Send(p.Address(), Envelope{Target: PIDRef{p.Address(), "x"}, Message: ping(1)}))
		ra.waitUntil(t, "the writer's write to time out", func(r *recorder) bool {
			for _, u := range r.undelivered {
				if errors.Is(u.Err, os.ErrDeadlineExceeded) {
					return true
				}
			}
			return false
		})
		ctx, cancel := context.WithTimeout(context.Background(), closeBound/4)
		defer cancel()
		start := time.Now()
		err := a.Close(ctx) // nil, or ctx's error if the reconnection took too long
		assert.Less(t, time.Since(start), closeBound, "Close(ctx) waited for the stalled peer: %v", err)
	})

	t.Run("the peer says goodbye", func(t *testing.T) {
		// a's reader closes the connection (p's goodbye), not its writer:
		// a close_notify is sent, and given up after closeNotifyWait.
		a, p, ra := setup(t, time.Minute)
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(t, p.Close(ctx))
		ra.waitEvent(t, EventDisconnected, ErrPeerShutdown)
		assert.Less(t, time.Since(start), closeBound)
		require.NoError(t, a.Close(ctx))
	})

	t.Run("Close's context ends during a stalled write", func(t *testing.T) {
		// The writer waits in its write (WriteTimeout a minute) when
		// Close's context ends: the forced close ends the write at once.
		// (A guard: crypto/tls already closes the socket under a Write in
		// progress, and closeStream's abort does too.)
		a, p, _ := setup(t, time.Minute)
		require.NoError(t, a.Send(p.Address(), Envelope{Target: PIDRef{p.Address(), "x"}, Message: ping(1)}))
		ctx, cancel := context.WithTimeout(context.Background(), closeBound/4)
		defer cancel()
		start := time.Now()
		err := a.Close(ctx)
		require.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Less(t, time.Since(start), closeBound)
	})
}

// TestCloseStream: closeStream closes a TLS stream with a close_notify
// alert unless told to abort, when the peer gets nothing but the end of
// the stream.
func TestCloseStream(t *testing.T) {
	ca := newTestCA(t)
	cfg := mtlsConfig(t, ca, "127.0.0.1")
	for _, tc := range []struct {
		name  string
		abort bool
	}{{"close_notify", false}, {"abort", true}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(t, err)
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, err := ln.Accept()
				if err != nil {
					close(accepted)
					return
				}
				accepted <- c
			}()
			raw, err := net.Dial("tcp", ln.Addr().String())
			require.NoError(t, err)
			srvRaw, ok := <-accepted
			require.True(t, ok)
			defer srvRaw.Close()
			srv := tls.Server(srvRaw, cfg.ServerTLS)
			cli := tls.Client(raw, &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca.pool, Certificates: cfg.ClientTLS.Certificates, ServerName: "127.0.0.1"})
			hs := make(chan error, 1)
			go func() { hs <- srv.Handshake() }()
			require.NoError(t, cli.Handshake())
			require.NoError(t, <-hs)
			// Everything the client writes after the handshake, to the end.
			_ = srvRaw.SetReadDeadline(time.Now().Add(waitTimeout))
			read := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(srvRaw)
				read <- b
			}()
			closeStream(cli, tc.abort)
			got := <-read
			if tc.abort {
				assert.Empty(t, got, "no alert after an abort")
			} else {
				// TLS 1.3 wraps the alert as application data: 5 bytes of
				// header, 2 of alert, 1 of type, 16 of tag.
				assert.Len(t, got, 24, "a close_notify alert")
			}
		})
	}
}
