package remote

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"sync"
)

// MemoryNetwork is an in-process Transport: several Nodes (and so several
// actor systems) in one process talk through it exactly as over TCP, with the
// same framing, handshake and endpoint code, but over synchronous in-memory
// pipes (net.Pipe). Addresses are "host:port" strings; listening on port 0
// picks a free port. Safe for concurrent use. Meant for tests.
type MemoryNetwork struct {
	mu        sync.Mutex
	listeners map[string]*memListener
	nextPort  int
}

// NewMemoryNetwork returns an empty network.
func NewMemoryNetwork() *MemoryNetwork {
	return &MemoryNetwork{listeners: map[string]*memListener{}, nextPort: 10000}
}

// Listen implements Transport.
func (n *MemoryNetwork) Listen(_ context.Context, address string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, fmt.Errorf("remote: memory listen %q: %w", address, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if port == "0" {
		for {
			n.nextPort++
			address = net.JoinHostPort(host, strconv.Itoa(n.nextPort))
			if _, taken := n.listeners[address]; !taken {
				break
			}
		}
	}
	if _, taken := n.listeners[address]; taken {
		return nil, fmt.Errorf("%w: %q", ErrAddressInUse, address)
	}
	l := &memListener{net: n, addr: memAddr(address), accept: make(chan net.Conn), closed: make(chan struct{})}
	n.listeners[address] = l
	return l, nil
}

// Dial implements Transport: it waits until the listener accepts, the
// listener closes, or ctx is done.
func (n *MemoryNetwork) Dial(ctx context.Context, address string) (net.Conn, error) {
	n.mu.Lock()
	l := n.listeners[address]
	n.mu.Unlock()
	if l == nil {
		return nil, fmt.Errorf("%w: %q", ErrNoListener, address)
	}
	client, server := net.Pipe()
	select {
	case l.accept <- server:
		return client, nil
	case <-l.closed:
	case <-ctx.Done():
		_ = client.Close()
		_ = server.Close()
		return nil, fmt.Errorf("remote: memory dial %q: %w", address, ctx.Err())
	}
	_ = client.Close()
	_ = server.Close()
	return nil, fmt.Errorf("%w: %q", ErrNoListener, address)
}

type memListener struct {
	net       *MemoryNetwork
	addr      memAddr
	accept    chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

func (l *memListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.accept:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *memListener) Close() error {
	l.closeOnce.Do(func() {
		l.net.mu.Lock()
		if l.net.listeners[string(l.addr)] == l {
			delete(l.net.listeners, string(l.addr))
		}
		l.net.mu.Unlock()
		close(l.closed)
	})
	return nil
}

func (l *memListener) Addr() net.Addr { return l.addr }

type memAddr string

func (a memAddr) Network() string { return "memory" }
func (a memAddr) String() string  { return string(a) }
