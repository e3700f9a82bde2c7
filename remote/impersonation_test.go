package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/url"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lazyMTLSConfig is a mutual-TLS config under ca whose certificate is set
// after Start (when the node's address is known) through the returned
// pointer.
func lazyMTLSConfig(ca *testCA) (Config, *atomic.Pointer[tls.Certificate]) {
	cert := new(atomic.Pointer[tls.Certificate])
	get := func() (*tls.Certificate, error) {
		if c := cert.Load(); c != nil {
			return c, nil
		}
		return nil, errors.New("no certificate yet")
	}
	cfg := testConfig()
	cfg.ServerTLS = &tls.Config{
		MinVersion:     tls.VersionTLS13,
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return get() },
		ClientAuth:     tls.RequireAndVerifyClientCert,
		ClientCAs:      ca.pool,
	}
	cfg.ClientTLS = &tls.Config{
		MinVersion:           tls.VersionTLS13,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return get() },
		RootCAs:              ca.pool,
	}
	return cfg, cert
}

func ptr[T any](v T) *T { return &v }

// checkUntouched checks that a kept its connection to b through an
// impersonation attempt: no disconnect, no termination, a's next envelope
// for b reaches b, and nothing reached the impostor.
func checkUntouched(t *testing.T, a, b *Node, ra, rb *recorder, seq uint64) {
	t.Helper()
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(seq)}))
	rb.waitUntil(t, "b gets a's next envelope", func(r *recorder) bool { return len(r.delivered) == int(seq) })
	assert.Equal(t, a.NodeID(), rb.delivered[seq-1].From.NodeID)
	ra.mu.Lock()
	defer ra.mu.Unlock()
	assert.Empty(t, ra.terminated, "b must not be reported terminated")
	for _, e := range ra.events {
		if e.Kind == EventDisconnected || e.Kind == EventPeerTerminated {
			t.Errorf("a lost b: %v", e)
		}
	}
	assert.Equal(t, int64(1), a.Stats().Connections)
}

// TestImpersonationRefused: A is connected to B; a third party that says it
// is B (B's address, even B's node ID) must neither replace that
// connection nor get B's envelopes.
func TestImpersonationRefused(t *testing.T) {
	t.Run("mutual TLS, a certificate from the same CA for another address", func(t *testing.T) {
		ca := newTestCA(t)
		cfgA, certA := lazyMTLSConfig(ca)
		a, ra := startNode(t, cfgA)
		certA.Store(ptr(ca.issue(t, "node-a", AddressURI(a.Address()))))
		cfgB, certB := lazyMTLSConfig(ca)
		b, rb := startNode(t, cfgB)
		certB.Store(ptr(ca.issue(t, "node-b", AddressURI(b.Address()))))

		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(1)}))
		rb.waitUntil(t, "a reaches b", func(r *recorder) bool { return len(r.delivered) == 1 })

		// The impostor: a valid certificate of the same CA, bound to its
		// own address, advertising B's address.
		cfgC, certC := lazyMTLSConfig(ca)
		cfgC.AdvertisedAddress = b.Address()
		c, rc := startNode(t, cfgC)
		certC.Store(ptr(ca.issue(t, "impostor", AddressURI("127.0.0.1:1"))))
		require.NoError(t, c.Send(a.Address(), Envelope{Target: PIDRef{a.Address(), "x"}, Message: ping(99)}))
		ev := ra.waitEvent(t, EventHandshakeRefused, ErrIdentityMismatch)
		assert.True(t, ev.Inbound)
		assert.Contains(t, ev.Err.Error(), "does not name the address")
		rc.waitEvent(t, EventHandshakeRefused, ErrIdentityMismatch) // told why

		checkUntouched(t, a, b, ra, rb, 2)
		assert.Empty(t, ra.delivered, "nothing from the impostor was delivered")
	})

	t.Run("plain TCP, a claim while the connection is alive", func(t *testing.T) {
		a, ra := startNode(t, testConfig())
		b, rb := startNode(t, testConfig())
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(1)}))
		rb.waitUntil(t, "a reaches b", func(r *recorder) bool { return len(r.delivered) == 1 })

		r := dialRaw(t, a.Address())
		r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: b.NodeID(), Address: b.Address()}).append(nil)))
		r.expectReject(RejectDuplicate)
		ra.waitEventFrom(t, r.local(), EventHandshakeRefused, ErrDuplicateConnection)

		// The real connection answers the probe and stays.
		a.mu.Lock()
		ep := a.endpoints[b.Address()]
		a.mu.Unlock()
		require.NotNil(t, ep)
		c := ep.current()
		require.NotNil(t, c)
		require.Eventually(t, func() bool { return c.probeUntil.Load() == 0 }, waitTimeout, time.Millisecond, "the probe is answered")
		assert.Same(t, c, ep.current())
		checkUntouched(t, a, b, ra, rb, 2)
	})
}

// TestRestartedPeerReplacesDeadConnection: a peer whose old connection is
// dead without A noticing (no FIN, no heartbeat timeout yet) is first
// refused, the old connection fails its probe and closes, and the new
// incarnation's next attempt gets in and is reported as a restart.
func TestRestartedPeerReplacesDeadConnection(t *testing.T) {
	cfg := testConfig()
	cfg.HandshakeTimeout = 300 * time.Millisecond
	a, ra := startNode(t, cfg)
	// Node IDs that sort below A's (hex), so that A's redial of the
	// address (nothing listens there) does not win the tie-break.
	const addr, oldID, newID = "10.5.5.5:1", "!b-old", "!b-new"

	old := dialRaw(t, a.Address())
	old.handshake(cfg.SystemName, oldID, addr) // then silent: it answers no ping
	ra.waitUntil(t, "old connection installed", func(r *recorder) bool {
		for _, e := range r.events {
			if e.Kind == EventConnected && e.Peer.NodeID == oldID {
				return true
			}
		}
		return false
	})

	r := dialRaw(t, a.Address())
	r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: cfg.SystemName, NodeID: newID, Address: addr}).append(nil)))
	r.expectReject(RejectDuplicate)

	ra.waitUntil(t, "the silent connection fails its probe", func(r *recorder) bool {
		for _, e := range r.events {
			if e.Kind == EventDisconnected && e.Peer.NodeID == oldID {
				return assert.ErrorIs(t, e.Err, ErrConnectionLost) && assert.Contains(t, e.Err.Error(), "liveness probe")
			}
		}
		return false
	})
	again := dialRaw(t, a.Address())
	again.handshake(cfg.SystemName, newID, addr)
	ra.waitUntil(t, "restart reported", func(r *recorder) bool { return len(r.terminated) == 1 })
	assert.Equal(t, Peer{Address: addr, NodeID: oldID}, ra.terminated[0].Peer)
	assert.ErrorIs(t, ra.terminated[0].Reason, ErrPeerRestarted)
}

func TestVerifyPeerCertificate(t *testing.T) {
	ca := newTestCA(t)
	leaf := func(uris ...*url.URL) *x509.Certificate {
		c, err := x509.ParseCertificate(ca.issue(t, "n", uris...).Certificate[0])
		require.NoError(t, err)
		return c
	}
	tests := []struct {
		name string
		cert *x509.Certificate
		addr string
		ok   bool
	}{
		{"address URI", leaf(AddressURI("127.0.0.1:7001")), "127.0.0.1:7001", true},
		{"address URI of another port", leaf(AddressURI("127.0.0.1:7001")), "127.0.0.1:7002", false},
		{"one of several address URIs", leaf(AddressURI("127.0.0.1:7001"), AddressURI("127.0.0.1:7002")), "127.0.0.1:7002", true},
		{"no address URI: the host's IP SAN", leaf(), "127.0.0.1:7002", true},
		{"no address URI: another host", leaf(), "10.0.0.1:7002", false},
		{"other URI schemes do not bind", leaf(&url.URL{Scheme: "spiffe", Host: "x"}), "127.0.0.1:1", true},
		{"no certificate", nil, "127.0.0.1:1", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := VerifyPeerCertificate(Peer{Address: tt.addr, NodeID: "n"}, tt.cert)
			if tt.ok {
				assert.NoError(t, err)
			} else {
				assert.ErrorIs(t, err, ErrIdentityMismatch)
			}
		})
	}

	t.Run("hook errors and panics refuse", func(t *testing.T) {
		n := &Node{}
		n.cfg.VerifyPeer = func(p Peer, _ *x509.Certificate) error {
			if p.NodeID == "boom" {
				panic("hook bug")
			}
			if p.NodeID != "allowed" {
				return errors.New("not on the list")
			}
			return nil
		}
		check := n.identityCheck(nil)
		assert.NoError(t, check(hello{NodeID: "allowed", Address: "h:1"}))
		assert.ErrorIs(t, check(hello{NodeID: "other", Address: "h:1"}), ErrIdentityMismatch)
		assert.ErrorIs(t, check(hello{NodeID: "boom", Address: "h:1"}), ErrIdentityMismatch)
	})
}
