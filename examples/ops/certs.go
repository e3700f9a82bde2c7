package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// certAuthority is a CA made with crypto/x509 alone. Nothing is committed:
// `ops certs` (or the test) makes a fresh one.
type certAuthority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newCA(name string) (*certAuthority, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &certAuthority{cert: cert, key: key}, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}

// issue makes a member certificate usable at both ends of a connection.
// uris are the fraktor:// URIs (remote.AddressURI) of the addresses the
// member may claim; without any, the IP SAN covers every port of 127.0.0.1.
func (ca *certAuthority) issue(name string, uris ...string) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	for _, u := range uris {
		pu, err := parseURI(u)
		if err != nil {
			return nil, nil, err
		}
		tmpl.URIs = append(tmpl.URIs, pu)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), nil
}

func (ca *certAuthority) certPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw})
}

// writeCerts writes ca.pem and <name>.pem / <name>-key.pem for each name
// into dir (keys 0600). uris[name], when given, pins that member's
// certificate to those addresses (remote.AddressURI); without, its IP SAN
// covers every port of 127.0.0.1.
func writeCerts(dir string, ca *certAuthority, names []string, uris map[string][]string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "ca.pem"), ca.certPEM(), 0o644); err != nil {
		return err
	}
	for _, n := range names {
		c, k, err := ca.issue(n, uris[n]...)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, n+".pem"), c, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, n+"-key.pem"), k, 0o600); err != nil {
			return err
		}
	}
	return nil
}

var errTLSFlags = errors.New("ops: --tls-cert, --tls-key and --tls-ca go together")

// loadTLS builds the server and client configurations of mutual TLS from
// PEM files; all three empty means plain TCP.
func loadTLS(certFile, keyFile, caFile string) (server, client *tls.Config, err error) {
	if certFile == "" && keyFile == "" && caFile == "" {
		return nil, nil, nil
	}
	if certFile == "" || keyFile == "" || caFile == "" {
		return nil, nil, errTLSFlags
	}
	pair, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return nil, nil, fmt.Errorf("ops: load member certificate: %w", err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		return nil, nil, fmt.Errorf("ops: read CA: %w", err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		return nil, nil, fmt.Errorf("ops: %s holds no PEM certificate", caFile)
	}
	server = &tls.Config{
		Certificates: []tls.Certificate{pair},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    roots,
		MinVersion:   tls.VersionTLS13,
	}
	client = &tls.Config{
		Certificates: []tls.Certificate{pair},
		RootCAs:      roots,
		MinVersion:   tls.VersionTLS13,
	}
	return server, client, nil
}

func parseURI(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("ops: certificate URI %q: %w", s, err)
	}
	return u, nil
}
