package testkit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"github.com/fraktor-go/fraktor/remote"
)

// ErrLinkCut: the fault network refused a connection because the link
// between the two members is cut (Partition, PartitionOneWay, Kill).
var ErrLinkCut = errors.New("testkit: link cut")

// faultNet wraps the transport every member of a test cluster uses and
// injects faults between members, by address:
//
//   - a cut link (from → to) holds every byte from's side writes on a
//     connection between the two until the link heals, as a network that
//     silently drops one direction does (the sender's writes stall once its
//     window is full); nothing is lost or reordered, so the framing stays
//     intact after a heal;
//   - a dial between two members with a cut link in either direction fails
//     with ErrLinkCut (a handshake needs both directions);
//   - an isolated member (Kill) has every connection closed at once;
//   - a reset link (Disconnect) has every connection between its two
//     members closed at once, as a connection reset (a NAT or load
//     balancer timeout, an RST) does: what was in flight on them is lost,
//     and new connections are allowed at once (unless the link is cut).
//
// Each dialed connection starts with a preamble naming the dialer's address,
// which the accepting side strips, so both ends know which link a
// connection belongs to.
type faultNet struct {
	inner remote.Transport

	mu       sync.Mutex
	cut      map[[2]string]bool // (from, to): from's writes to to are held
	isolated map[string]bool
	conns    map[*faultConn]struct{}
	changed  chan struct{} // closed and replaced on every change
}

func newFaultNet(inner remote.Transport) *faultNet {
	return &faultNet{inner: inner, cut: map[[2]string]bool{}, isolated: map[string]bool{},
		conns: map[*faultConn]struct{}{}, changed: make(chan struct{})}
}

// member returns the transport of the member that listens on self.
func (n *faultNet) member() *memberTransport { return &memberTransport{net: n} }

func (n *faultNet) notifyLocked() {
	close(n.changed)
	n.changed = make(chan struct{})
}

// setCut cuts (or heals) the direction from → to.
func (n *faultNet) setCut(from, to string, cut bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if cut {
		n.cut[[2]string{from, to}] = true
	} else {
		delete(n.cut, [2]string{from, to})
	}
	n.notifyLocked()
}

// isolate closes every connection of addr and refuses new ones until
// rejoin.
func (n *faultNet) isolate(addr string) {
	n.mu.Lock()
	n.isolated[addr] = true
	var hit []*faultConn
	for c := range n.conns {
		if c.self == addr || c.peer() == addr {
			hit = append(hit, c)
		}
	}
	n.notifyLocked()
	n.mu.Unlock()
	for _, c := range hit {
		_ = c.Close()
	}
}

// reset closes every connection between a and b, either direction, and
// returns how many it closed. A connection whose accepting end has not yet
// read its preamble (its peer is not known) is left alone: it was dialed
// after the reset.
func (n *faultNet) reset(a, b string) int {
	n.mu.Lock()
	var hit []*faultConn
	for c := range n.conns {
		if p := c.peer(); c.self == a && p == b || c.self == b && p == a {
			hit = append(hit, c)
		}
	}
	n.mu.Unlock()
	for _, c := range hit {
		_ = c.Close()
	}
	return len(hit)
}

// rejoin lifts an isolation and every cut of addr (a restarted member).
func (n *faultNet) rejoin(addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.isolated, addr)
	for k := range n.cut {
		if k[0] == addr || k[1] == addr {
			delete(n.cut, k)
		}
	}
	n.notifyLocked()
}

// refusedLocked reports whether a connection between a and b is refused.
func (n *faultNet) refusedLocked(a, b string) bool {
	return n.isolated[a] || n.isolated[b] || n.cut[[2]string{a, b}] || n.cut[[2]string{b, a}]
}

// memberTransport is one member's view of the fault network.
type memberTransport struct {
	net  *faultNet
	mu   sync.Mutex
	self string
}

func (t *memberTransport) addr() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.self
}

// Listen implements remote.Transport.
func (t *memberTransport) Listen(ctx context.Context, address string) (net.Listener, error) {
	ln, err := t.net.inner.Listen(ctx, address)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.self = ln.Addr().String()
	t.mu.Unlock()
	return &faultListener{Listener: ln, t: t}, nil
}

// Dial implements remote.Transport.
func (t *memberTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	self := t.addr()
	n := t.net
	n.mu.Lock()
	refused := n.refusedLocked(self, address)
	n.mu.Unlock()
	if refused {
		return nil, fmt.Errorf("%w: %s → %s", ErrLinkCut, self, address)
	}
	raw, err := n.inner.Dial(ctx, address)
	if err != nil {
		return nil, err
	}
	c := newFaultConn(n, raw, self)
	c.setPeer(address)
	pre := make([]byte, 2, 2+len(self))
	binary.BigEndian.PutUint16(pre, uint16(len(self)))
	pre = append(pre, self...)
	if err := c.track(); err != nil {
		_ = raw.Close()
		return nil, err
	}
	if _, err := c.Write(pre); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

type faultListener struct {
	net.Listener
	t *memberTransport
}

func (l *faultListener) Accept() (net.Conn, error) {
	raw, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	c := newFaultConn(l.t.net, raw, l.t.addr())
	c.inbound = true
	if err := c.track(); err != nil {
		_ = raw.Close()
		// The listener goes on: a refused connection is not its failure.
		return c, nil
	}
	return c, nil
}

// faultConn is one end of a connection between two members.
type faultConn struct {
	net.Conn
	n       *faultNet
	self    string
	inbound bool // the accepting end: reads the preamble first

	mu       sync.Mutex
	peerAddr string
	preRead  bool

	closeOnce sync.Once
	closed    chan struct{}
}

func newFaultConn(n *faultNet, raw net.Conn, self string) *faultConn {
	return &faultConn{Conn: raw, n: n, self: self, closed: make(chan struct{})}
}

func (c *faultConn) peer() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.peerAddr
}

func (c *faultConn) setPeer(p string) {
	c.mu.Lock()
	c.peerAddr = p
	c.mu.Unlock()
}

func (c *faultConn) track() error {
	c.n.mu.Lock()
	defer c.n.mu.Unlock()
	if c.n.isolated[c.self] {
		return fmt.Errorf("%w: %s is isolated", ErrLinkCut, c.self)
	}
	c.n.conns[c] = struct{}{}
	return nil
}

// Read implements net.Conn; the accepting end strips the preamble first
// and then drops the connection if its link is refused.
func (c *faultConn) Read(b []byte) (int, error) {
	if c.inbound {
		c.mu.Lock()
		done := c.preRead
		c.mu.Unlock()
		if !done {
			if err := c.readPreamble(); err != nil {
				_ = c.Close()
				return 0, err
			}
		}
	}
	return c.Conn.Read(b)
}

func (c *faultConn) readPreamble() error {
	var hdr [2]byte
	if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
		return err
	}
	addr := make([]byte, binary.BigEndian.Uint16(hdr[:]))
	if _, err := io.ReadFull(c.Conn, addr); err != nil {
		return err
	}
	c.mu.Lock()
	c.peerAddr, c.preRead = string(addr), true
	c.mu.Unlock()
	c.n.mu.Lock()
	refused := c.n.refusedLocked(c.self, string(addr))
	c.n.mu.Unlock()
	if refused {
		return fmt.Errorf("%w: %s → %s", ErrLinkCut, addr, c.self)
	}
	return nil
}

// Write implements net.Conn: it waits while the link from this end to its
// peer is cut.
func (c *faultConn) Write(b []byte) (int, error) {
	for {
		peer := c.peer()
		c.n.mu.Lock()
		held := peer != "" && c.n.cut[[2]string{c.self, peer}]
		ch := c.n.changed
		c.n.mu.Unlock()
		if !held {
			return c.Conn.Write(b)
		}
		select {
		case <-ch:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
}

// Close implements net.Conn.
func (c *faultConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		c.n.mu.Lock()
		delete(c.n.conns, c)
		c.n.mu.Unlock()
	})
	return c.Conn.Close()
}
