package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/url"
)

// AddressURIScheme is the scheme of the URI SAN that binds a certificate to
// one advertised address (see VerifyPeerCertificate).
const AddressURIScheme = "fraktor"

// AddressURI returns the URI SAN that binds a certificate to the advertised
// address (host:port): fraktor://host:port. Put it in a node's certificate
// (x509.Certificate.URIs) to let that certificate claim exactly that address.
func AddressURI(address string) *url.URL {
	return &url.URL{Scheme: AddressURIScheme, Host: address}
}

// VerifyPeerCertificate is the rule a Node applies, when Config.VerifyPeer
// is nil, to a peer that presented a certificate (verified by TLS against
// the configured CAs) and says in its hello that it is peer.Address:
//
//   - if the certificate has URI SANs of the fraktor scheme, one of them must
//     be AddressURI(peer.Address) exactly (host and port);
//   - otherwise the address's host must match the certificate's DNS or IP
//     SANs (x509.Certificate.VerifyHostname), so any node holding the
//     certificate of a host may claim any port on it.
//
// The error wraps ErrIdentityMismatch. A hook in Config.VerifyPeer may call
// it and add its own checks (for example on peer.NodeID).
func VerifyPeerCertificate(peer Peer, cert *x509.Certificate) error {
	if cert == nil {
		return fmt.Errorf("%w: no certificate for %q", ErrIdentityMismatch, peer.Address)
	}
	bound := false
	for _, u := range cert.URIs {
		if u.Scheme != AddressURIScheme {
			continue
		}
		if u.Host == peer.Address && u.Path == "" && u.User == nil && u.RawQuery == "" {
			return nil
		}
		bound = true
	}
	if bound {
		return fmt.Errorf("%w: certificate %q does not name the address %q", ErrIdentityMismatch, cert.Subject.CommonName, peer.Address)
	}
	host, _, err := net.SplitHostPort(peer.Address)
	if err != nil {
		return fmt.Errorf("%w: address %q: %w", ErrIdentityMismatch, peer.Address, err)
	}
	if err := cert.VerifyHostname(host); err != nil {
		return fmt.Errorf("%w: certificate %q does not cover %q: %w", ErrIdentityMismatch, cert.Subject.CommonName, peer.Address, err)
	}
	return nil
}

// peerCertificate returns the verified leaf certificate the peer presented
// on raw, or nil (no TLS, or no client certificate).
func peerCertificate(raw net.Conn) *x509.Certificate {
	tc, ok := raw.(*tls.Conn)
	if !ok {
		return nil
	}
	if st := tc.ConnectionState(); len(st.PeerCertificates) > 0 {
		return st.PeerCertificates[0]
	}
	return nil
}

// identityCheck returns the check of a peer's hello against what the
// connection raw proves about it: Config.VerifyPeer when set, otherwise
// VerifyPeerCertificate when the peer presented a certificate; nil when
// there is nothing to check.
func (n *Node) identityCheck(raw net.Conn) func(hello) error {
	cert := peerCertificate(raw)
	verify := n.cfg.VerifyPeer
	if verify == nil {
		if cert == nil {
			return nil
		}
		verify = VerifyPeerCertificate
	}
	return func(h hello) (err error) {
		defer func() {
			// A panic in the user's hook refuses the peer.
			if r := recover(); r != nil {
				err = fmt.Errorf("%w: VerifyPeer panicked: %v", ErrIdentityMismatch, r)
			}
		}()
		err = verify(Peer{Address: h.Address, NodeID: h.NodeID}, cert)
		if err == nil || errors.Is(err, ErrIdentityMismatch) {
			return err
		}
		return fmt.Errorf("%w: %w", ErrIdentityMismatch, err)
	}
}
