package remote

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// Transport opens the byte streams a Node runs its protocol on. Everything
// above it (framing, handshake, endpoints) is shared by all transports.
//
// Listen is called once by Node.Start; Dial is called from a Node's endpoint
// goroutines, concurrently, and may block until ctx is done. Returned
// connections are owned by the Node, which closes them. A Dial that
// performs a TLS handshake does it before returning; on the listening side
// the Node runs the TLS handshake itself (under HandshakeTimeout) for any
// accepted *tls.Conn.
type Transport interface {
	Listen(ctx context.Context, address string) (net.Listener, error)
	Dial(ctx context.Context, address string) (net.Conn, error)
}

// TCPTransport is the production transport: TCP, with TLS when the configs
// are set. Its zero value is plain TCP. Safe for concurrent use; it keeps no
// state besides the configs, which must not be modified after first use.
type TCPTransport struct {
	ServerTLS *tls.Config // listener side; nil = plain TCP
	ClientTLS *tls.Config // dialing side; nil = plain TCP
}

// Listen implements Transport.
func (t *TCPTransport) Listen(ctx context.Context, address string) (net.Listener, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", address)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			// One sentinel for a taken address, whatever the transport
			// (TestTCPListenTakenAddressIsErrAddressInUse).
			return nil, fmt.Errorf("remote: listen %q: %w: %w", address, ErrAddressInUse, err)
		}
		return nil, fmt.Errorf("remote: listen %q: %w", address, err)
	}
	if t.ServerTLS != nil {
		ln = tls.NewListener(ln, t.ServerTLS)
	}
	return ln, nil
}

// Dial implements Transport. With ClientTLS it completes the TLS handshake
// (verifying the server against ClientTLS.RootCAs; ServerName defaults to
// the dialed host) before returning.
func (t *TCPTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", address)
	if err != nil {
		return nil, fmt.Errorf("remote: dial %q: %w", address, err)
	}
	if t.ClientTLS == nil {
		return c, nil
	}
	cfg := t.ClientTLS
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		if host, _, err := net.SplitHostPort(address); err == nil {
			cfg.ServerName = host
		}
	}
	tc := tls.Client(c, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("%w: tls with %q: %w", ErrHandshake, address, err)
	}
	return tc, nil
}
