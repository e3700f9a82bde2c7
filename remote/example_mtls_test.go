package remote_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// exampleCA is a certificate authority made with crypto/x509 alone.
type exampleCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newExampleCA(name string) *exampleCA {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		panic(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		panic(err)
	}
	return &exampleCA{cert: cert, key: key}
}

// issue makes a node certificate for both ends of a connection (server and
// client auth). Its IP SAN covers every port of 127.0.0.1, as a node that
// listens on port 0 needs; a node with a fixed address would carry
// remote.AddressURI(address) in URIs instead, to claim that address only.
func (ca *exampleCA) issue(serial int64) tls.Certificate {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial),
		Subject:      pkix.Name{CommonName: "node"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		panic(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// Two systems over loopback TCP with mutual TLS: each presents a
// certificate of the CA both trust and requires one from its peer. A third
// system whose certificate comes from another CA is refused in the TLS
// handshake; its request becomes a dead letter once GiveUpAfter passes.
func ExampleConfig_mutualTLS() {
	ctx := context.Background()
	ca := newExampleCA("cluster CA")
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	type Ping struct{ N int }
	newSystem := func(cert tls.Certificate) *actor.System {
		ser := remote.NewSerializers()
		if err := remote.RegisterJSON[*Ping](ser, "example.Ping"); err != nil {
			panic(err)
		}
		cfg := remote.DefaultConfig()
		cfg.ListenAddress = "127.0.0.1:0"
		cfg.SystemName = "shop"
		cfg.Serializers = ser
		cfg.GiveUpAfter = 300 * time.Millisecond
		cfg.ServerTLS = &tls.Config{
			Certificates: []tls.Certificate{cert},
			ClientAuth:   tls.RequireAndVerifyClientCert,
			ClientCAs:    roots,
			MinVersion:   tls.VersionTLS13,
		}
		cfg.ClientTLS = &tls.Config{
			Certificates: []tls.Certificate{cert},
			RootCAs:      roots, // ServerName: the dialed host
			MinVersion:   tls.VersionTLS13,
		}
		sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
		if err != nil {
			panic(err)
		}
		return sys
	}
	a := newSystem(ca.issue(2))
	defer a.Shutdown(ctx)
	b := newSystem(ca.issue(3))
	defer b.Shutdown(ctx)
	if _, err := b.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if p, ok := c.Message().(*Ping); ok {
			c.Respond(&Ping{N: p.N + 1})
		}
	}), "ponger"); err != nil {
		panic(err)
	}
	ponger := actor.NewPID(b.Address(), "ponger")

	reqCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	reply, err := actor.Request[*Ping](reqCtx, a.Root(), ponger, &Ping{N: 1})
	fmt.Println("same CA:", reply.N, err)

	rogue := newSystem(newExampleCA("another CA").issue(4))
	defer rogue.Shutdown(ctx)
	_, err = actor.Request[*Ping](reqCtx, rogue.Root(), actor.NewPID(b.Address(), "ponger"), &Ping{N: 1})
	fmt.Println("another CA: dead letter:", errors.Is(err, actor.ErrDeadLetter), "unreachable:", errors.Is(err, remote.ErrPeerUnreachable))
	// Output:
	// same CA: 2 <nil>
	// another CA: dead letter: true unreachable: true
}
