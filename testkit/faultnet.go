package testkit

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
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
//     and new connections are allowed at once (unless the link is cut);
//   - a delayed link (from → to, DelayLink) delivers what from's side
//     writes d later on the clock, in order: the write returns at once (as
//     into a socket buffer) and a goroutine of the connection end (its
//     pump) writes the bytes on when they fall due. Bytes written while a
//     delay is lifted still queue behind those held, so order holds.
//
// Each dialed connection starts with a preamble naming the dialer's address
// and the connection's number, which the accepting side strips, so both
// ends know which link a connection belongs to and which end is the
// other.
//
// It also tells a virtual-time cluster's settle what is in flight on the
// wire (quiet, mayHold): each end counts the bytes its member wrote (from
// the moment the write begins, so a write a synchronous pipe holds until
// the peer reads counts too) and the bytes its member's reader was given,
// and knows whether that reader still holds bytes it was given (it has
// not come back for more). A write a cut holds is not counted: it is not
// in flight until the link heals. Nor are bytes a delay holds: they count
// from the moment they fall due (released), so a settle waits for them
// only from then on (a released write the pump has not yet passed on
// keeps the wire from being quiet, unless the link is cut).
type faultNet struct {
	inner remote.Transport
	clock scheduler.Clock // the cluster's clock
	// holdWindow is how long after a failed dial or a closed connection a
	// member may keep envelopes queued for a peer while it waits out its
	// reconnect backoff (see mayHold).
	holdWindow time.Duration

	// activity counts every write begun and every read that returned
	// bytes: a settle that saw it unchanged around its looks saw one
	// state of the wire. dials counts the Dial calls under way.
	activity atomic.Uint64
	dials    atomic.Int64
	nextID   atomic.Uint64

	mu       sync.Mutex
	cut      map[[2]string]bool // (from, to): from's writes to to are held
	delay    map[[2]string]time.Duration
	isolated map[string]bool
	conns    map[*faultConn]struct{}
	changed  chan struct{} // closed and replaced on every change
	// dialed holds the dialer ends whose preamble the accepting end has
	// not read yet, by number.
	dialed map[uint64]*faultConn
	// trouble is when (on now) a member last saw one of its dials fail or
	// one of its connections close; deferred is the last
	// remote.Stats.DialsDeferred settle saw of it.
	trouble  map[string]time.Time
	deferred map[string]uint64
}

func newFaultNet(inner remote.Transport, clock scheduler.Clock, holdWindow time.Duration) *faultNet {
	return &faultNet{inner: inner, clock: clock, holdWindow: holdWindow,
		cut: map[[2]string]bool{}, delay: map[[2]string]time.Duration{}, isolated: map[string]bool{},
		conns: map[*faultConn]struct{}{}, changed: make(chan struct{}),
		dialed: map[uint64]*faultConn{}, trouble: map[string]time.Time{}, deferred: map[string]uint64{}}
}

// noteTrouble records that the members at addrs ("" is skipped) saw a
// dial fail or a connection close now.
func (n *faultNet) noteTrouble(addrs ...string) {
	now := n.clock.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, a := range addrs {
		if a != "" {
			n.trouble[a] = now
		}
	}
}

// noteDeferred records the member's remote.Stats.DialsDeferred: a change
// is trouble (its dial budget deferred a dial to a later backoff slot,
// with envelopes queued meanwhile).
func (n *faultNet) noteDeferred(addr string, deferred uint64) {
	n.mu.Lock()
	last := n.deferred[addr]
	n.deferred[addr] = deferred
	n.mu.Unlock()
	if deferred != last {
		n.noteTrouble(addr)
	}
}

// mayHold reports whether the member at addr may hold envelopes queued
// for a peer that its remote node is not writing now, for a reason that
// is no lag of its goroutines: a cut link of its own (its writes or dials
// held or refused), isolation, or trouble (a failed dial, a closed
// connection, a deferred dial) within holdWindow, while its endpoint waits
// for its next reconnect slot, on the clock. Remote's Stats give the
// queued bytes of a node, not of a peer, so this is per member.
func (n *faultNet) mayHold(addr string) bool {
	now := n.clock.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.isolated[addr] {
		return true
	}
	for k := range n.cut {
		if k[0] == addr || k[1] == addr {
			return true
		}
	}
	t, ok := n.trouble[addr]
	return ok && now.Sub(t) <= n.holdWindow
}

// quiet reports whether nothing is in flight on the wire: no dial under
// way, no dialed connection whose preamble is unread, no open end whose
// reader holds bytes it was given, and no open end with bytes written
// that the other end's reader was not given yet (unless that end is
// closed: they are lost). Bytes a cut holds were never written. It is
// one state of the wire when activity is the same before and after.
func (n *faultNet) quiet() bool {
	if n.dials.Load() > 0 {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if len(n.dialed) > 0 {
		return false
	}
	for c := range n.conns {
		if c.isClosed.Load() {
			continue
		}
		if c.busy.Load() {
			return false
		}
		if c.releasing.Load() > 0 && !n.cut[[2]string{c.self, c.peer()}] {
			return false
		}
		if o := c.other; o != nil && !o.isClosed.Load() && c.written.Load() != o.read.Load() {
			return false
		}
	}
	return true
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

// setDelay sets the delay of the direction from → to (d ≤ 0: none).
func (n *faultNet) setDelay(from, to string, d time.Duration) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if d > 0 {
		n.delay[[2]string{from, to}] = d
	} else {
		delete(n.delay, [2]string{from, to})
	}
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

// rejoin lifts an isolation and every cut and delay of addr (a restarted
// member).
func (n *faultNet) rejoin(addr string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.isolated, addr)
	for k := range n.cut {
		if k[0] == addr || k[1] == addr {
			delete(n.cut, k)
		}
	}
	for k := range n.delay {
		if k[0] == addr || k[1] == addr {
			delete(n.delay, k)
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
// The preamble (the dialer's address and the connection's number) is
// written here, uncounted: the dial counts as under way until the
// accepting end has read it.
func (t *memberTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	self := t.addr()
	n := t.net
	n.dials.Add(1)
	defer n.dials.Add(-1)
	n.mu.Lock()
	refused := n.refusedLocked(self, address)
	n.mu.Unlock()
	if refused {
		n.noteTrouble(self)
		return nil, fmt.Errorf("%w: %s → %s", ErrLinkCut, self, address)
	}
	raw, err := n.inner.Dial(ctx, address)
	if err != nil {
		n.noteTrouble(self)
		return nil, err
	}
	c := newFaultConn(n, raw, self)
	c.setPeer(address)
	c.id = n.nextID.Add(1)
	pre := make([]byte, 2, 2+len(self)+8)
	binary.BigEndian.PutUint16(pre, uint16(len(self)))
	pre = append(pre, self...)
	pre = binary.BigEndian.AppendUint64(pre, c.id)
	if err := c.track(); err != nil {
		_ = raw.Close()
		n.noteTrouble(self)
		return nil, err
	}
	if _, err := c.Conn.Write(pre); err != nil {
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
	inbound bool   // the accepting end: reads the preamble first
	id      uint64 // the dialer end's number, in the preamble

	mu       sync.Mutex
	peerAddr string
	preRead  bool

	// other is the other end, once the accepting end has read the
	// preamble (n.mu).
	other *faultConn
	// written counts the bytes this end's member wrote (from the start of
	// each write), read the bytes its reader was given (the preamble
	// aside); busy is set while the reader holds bytes it was given: from
	// a read that returned some until its next read begins.
	written, read atomic.Int64
	busy          atomic.Bool
	// releasing counts the delayed writes that fell due and that the pump
	// has not passed on yet.
	releasing atomic.Int64

	// The delay line (a delayed link): writes not yet passed on, oldest
	// first; released of them fell due. The pump runs while the queue is
	// not empty.
	dmu      sync.Mutex
	queue    []delayedWrite
	released int
	timerOn  bool
	stopTmr  func() bool
	pumpOn   bool
	wake     chan struct{} // the pump's: cap 1
	writeErr error         // the pump's inner write failed: later writes fail

	closeOnce sync.Once
	closed    chan struct{}
	isClosed  atomic.Bool
}

type delayedWrite struct {
	due time.Time
	b   []byte
}

func newFaultConn(n *faultNet, raw net.Conn, self string) *faultConn {
	return &faultConn{Conn: raw, n: n, self: self, closed: make(chan struct{}), wake: make(chan struct{}, 1)}
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
	if c.id != 0 {
		c.n.dialed[c.id] = c
	}
	return nil
}

// Read implements net.Conn; the accepting end strips the preamble first
// and then drops the connection if its link is refused. A read that
// returns bytes marks the end busy until the next read begins.
func (c *faultConn) Read(b []byte) (int, error) {
	c.busy.Store(false)
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
	nr, err := c.Conn.Read(b)
	if nr > 0 {
		c.busy.Store(true)
		c.read.Add(int64(nr))
		c.n.activity.Add(1)
	}
	return nr, err
}

func (c *faultConn) readPreamble() error {
	var hdr [2]byte
	if _, err := io.ReadFull(c.Conn, hdr[:]); err != nil {
		return err
	}
	rest := make([]byte, int(binary.BigEndian.Uint16(hdr[:]))+8)
	if _, err := io.ReadFull(c.Conn, rest); err != nil {
		return err
	}
	addr, id := rest[:len(rest)-8], binary.BigEndian.Uint64(rest[len(rest)-8:])
	c.mu.Lock()
	c.peerAddr, c.preRead = string(addr), true
	c.mu.Unlock()
	c.n.mu.Lock()
	if d := c.n.dialed[id]; d != nil {
		delete(c.n.dialed, id)
		d.other, c.other = c, d
	}
	refused := c.n.refusedLocked(c.self, string(addr))
	c.n.mu.Unlock()
	if refused {
		return fmt.Errorf("%w: %s → %s", ErrLinkCut, addr, c.self)
	}
	return nil
}

// Write implements net.Conn: on a delayed link (or while earlier delayed
// writes are still queued) it queues a copy of b and returns at once;
// otherwise it writes through (send).
func (c *faultConn) Write(b []byte) (int, error) {
	peer := c.peer()
	var d time.Duration
	if peer != "" {
		c.n.mu.Lock()
		d = c.n.delay[[2]string{c.self, peer}]
		c.n.mu.Unlock()
	}
	c.dmu.Lock()
	if d <= 0 && len(c.queue) == 0 {
		c.dmu.Unlock()
		return c.send(b)
	}
	if c.writeErr != nil || c.isClosed.Load() {
		err := c.writeErr
		c.dmu.Unlock()
		if err == nil {
			err = net.ErrClosed
		}
		return 0, err
	}
	due := c.n.clock.Now().Add(max(d, 0))
	if k := len(c.queue); k > 0 && due.Before(c.queue[k-1].due) {
		due = c.queue[k-1].due // in order: never before what is queued
	}
	c.queue = append(c.queue, delayedWrite{due: due, b: append([]byte(nil), b...)})
	c.armLocked()
	if !c.pumpOn {
		c.pumpOn = true
		go c.pump()
	}
	c.dmu.Unlock()
	return len(b), nil
}

// armLocked sets the delay line's timer for its first write not yet due,
// unless one is set.
func (c *faultConn) armLocked() {
	if c.timerOn || c.released >= len(c.queue) {
		return
	}
	c.timerOn = true
	wait := c.queue[c.released].due.Sub(c.n.clock.Now())
	c.stopTmr = c.n.clock.AfterFunc(wait, c.release)
}

// release is the delay line's timer: the writes due now are released to
// the pump (counted in releasing from here, so a settle waits for them).
func (c *faultConn) release() {
	now := c.n.clock.Now()
	c.dmu.Lock()
	c.timerOn = false
	k := c.released
	for k < len(c.queue) && (k == c.released || !c.queue[k].due.After(now)) {
		k++
	}
	c.releasing.Add(int64(k - c.released))
	c.released = k
	c.armLocked()
	c.dmu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// pump passes the released writes on, in order, until the queue is empty
// or the connection closes.
func (c *faultConn) pump() {
	for {
		c.dmu.Lock()
		if len(c.queue) == 0 || c.isClosed.Load() {
			c.pumpOn = false
			c.releasing.Add(-int64(c.released))
			c.queue, c.released = nil, 0
			c.dmu.Unlock()
			return
		}
		if c.released == 0 {
			c.dmu.Unlock()
			select {
			case <-c.wake:
			case <-c.closed:
			}
			continue
		}
		w := c.queue[0]
		c.dmu.Unlock()
		_, err := c.send(w.b)
		c.dmu.Lock()
		c.queue[0] = delayedWrite{}
		c.queue = c.queue[1:]
		c.released--
		c.releasing.Add(-1)
		if err != nil && c.writeErr == nil {
			c.writeErr = err
		}
		c.dmu.Unlock()
		if err != nil {
			_ = c.Close() // what follows the lost bytes cannot be framed
		}
	}
}

// send writes b through: it waits while the link from this end to its
// peer is cut; then the bytes count as written (in flight) from the start
// of the inner write.
func (c *faultConn) send(b []byte) (int, error) {
	for {
		peer := c.peer()
		c.n.mu.Lock()
		held := peer != "" && c.n.cut[[2]string{c.self, peer}]
		ch := c.n.changed
		c.n.mu.Unlock()
		if !held {
			c.written.Add(int64(len(b)))
			c.n.activity.Add(1)
			nw, err := c.Conn.Write(b)
			if nw < len(b) {
				c.written.Add(int64(nw - len(b))) // never sent
			}
			return nw, err
		}
		select {
		case <-ch:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
}

// Close implements net.Conn. A closed connection is trouble for both
// members (see mayHold).
func (c *faultConn) Close() error {
	c.closeOnce.Do(func() {
		c.isClosed.Store(true)
		close(c.closed)
		c.dmu.Lock()
		if c.stopTmr != nil {
			c.stopTmr()
		}
		c.timerOn = false
		c.dmu.Unlock()
		c.n.mu.Lock()
		delete(c.n.conns, c)
		if c.id != 0 && c.n.dialed[c.id] == c {
			delete(c.n.dialed, c.id)
		}
		c.n.mu.Unlock()
		c.n.noteTrouble(c.self, c.peer())
	})
	return c.Conn.Close()
}
