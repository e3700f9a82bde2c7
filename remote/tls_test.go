package remote

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testCA is a self-signed certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fraktor test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	cert, err := x509.ParseCertificate(der)
	require.NoError(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testCA{cert: cert, key: key, pool: pool}
}

// issue returns a certificate for a node on 127.0.0.1, usable as server and
// as client certificate, with uris as URI SANs.
func (ca *testCA) issue(t *testing.T, name string, uris ...*url.URL) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	serial, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		URIs:         uris,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// mtlsConfig is a node config with mutual TLS under ca.
func mtlsConfig(t *testing.T, ca *testCA, name string) Config {
	cert := ca.issue(t, name)
	cfg := testConfig()
	cfg.ServerTLS = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    ca.pool,
	}
	cfg.ClientTLS = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{cert},
		RootCAs:      ca.pool,
	}
	return cfg
}

func TestMutualTLS(t *testing.T) {
	ca := newTestCA(t)
	a, ra := startNode(t, mtlsConfig(t, ca, "node-a"))
	b, rb := startNode(t, mtlsConfig(t, ca, "node-b"))
	c, _ := startNode(t, mtlsConfig(t, ca, "node-c"))
	exchange := func(t *testing.T, seq uint64) {
		t.Helper()
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Sender: PIDRef{a.Address(), "s"}, Message: ping(seq)}))
		require.NoError(t, c.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(seq)}))
		rb.waitUntil(t, "deliveries over mTLS", func(r *recorder) bool { return len(r.delivered) == int(2*seq) })
		require.NoError(t, b.Send(a.Address(), Envelope{Target: PIDRef{a.Address(), "s"}, Message: &Pong{Seq: seq}}))
		ra.waitUntil(t, "reply over mTLS", func(r *recorder) bool { return len(r.delivered) == int(seq) })
	}
	exchange(t, 1)

	t.Run("plain TCP client against the TLS listener", func(t *testing.T) {
		r := dialRaw(t, b.Address())
		r.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: "plain", Address: "10.1.1.1:1"}).append(nil)))
		ev := rb.waitEventFrom(t, r.local(), EventHandshakeRefused, ErrHandshake)
		assert.Contains(t, ev.Err.Error(), "tls")
		_, _, err := r.fr.next()
		assert.Error(t, err, "no frame comes back over plain TCP")
		exchange(t, 2)
	})

	t.Run("client without a certificate", func(t *testing.T) {
		raw, err := net.Dial("tcp", b.Address())
		require.NoError(t, err)
		defer raw.Close()
		tc := tls.Client(raw, &tls.Config{MinVersion: tls.VersionTLS13, RootCAs: ca.pool, ServerName: "127.0.0.1"})
		require.NoError(t, tc.SetDeadline(time.Now().Add(waitTimeout)))
		// With TLS 1.3 the client finishes first; the server refuses after.
		_ = tc.Handshake()
		_, _ = tc.Write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: "nocert", Address: "10.1.1.2:1"}).append(nil)))
		_, err = tc.Read(make([]byte, 1))
		assert.Error(t, err)
		ev := rb.waitEventFrom(t, raw.LocalAddr().String(), EventHandshakeRefused, ErrHandshake)
		assert.Contains(t, ev.Err.Error(), "certificate")
		exchange(t, 3)
	})

	t.Run("node with a certificate from another CA", func(t *testing.T) {
		other := newTestCA(t)
		cfg := mtlsConfig(t, other, "stranger")
		cfg.ClientTLS.RootCAs = ca.pool // trusts b, but b does not trust it
		s, rs := startNode(t, cfg)
		require.NoError(t, s.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(99)}))
		rs.waitEvent(t, EventHandshakeRefused, ErrHandshake)
		rb.waitUntil(t, "b refuses the stranger", func(r *recorder) bool {
			for _, e := range r.events {
				if e.Kind == EventHandshakeRefused && e.Inbound && e.Peer.NodeID == "" {
					return true
				}
			}
			return false
		})
		exchange(t, 4)
		for _, d := range rb.delivered {
			assert.NotEqual(t, s.NodeID(), d.From.NodeID)
		}
	})
}
