package soak_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"
	"weak"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

const clusterName = "soak"

// The grain and actor messages (JSON over the wire).
type (
	ping struct {
		N int `json:"n"`
	}
	pong struct {
		N int `json:"n"`
	}
	hang struct{} // a grain or sink never answers it
	bye  struct{} // the grain passivates itself
)

func registerMessages(s *remote.Serializers) error {
	for _, err := range []error{
		remote.RegisterJSON[*ping](s, "soak.ping"),
		remote.RegisterJSON[*pong](s, "soak.pong"),
		remote.RegisterJSON[*hang](s, "soak.hang"),
		remote.RegisterJSON[*bye](s, "soak.bye"),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// grainIdle is the item grains' idle timeout: most of them are used once
// and passivate this long after.
const grainIdle = 150 * time.Millisecond

// itemKind counts pings; it never answers hang and passivates on bye.
func itemKind() cluster.Kind {
	return cluster.NewKind("item", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *ping:
				n += m.N
				c.Respond(&pong{N: n})
			case *bye:
				cluster.Passivate(c)
			}
		})
	}), cluster.WithIdleTimeout(grainIdle))
}

// echo answers a ping with a pong; sink never answers.
var (
	echoProps = actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*ping); ok {
			c.Respond(&pong{N: m.N})
		}
	})
	sinkProps = actor.PropsFromFunc(func(actor.Context) {})
)

// watchThem asks a watcher to watch the PIDs.
type watchThem struct{ pids []*actor.PID }

// watcherProps watches what it is told to and calls gone for each
// Terminated.
func watcherProps(gone func()) *actor.Props {
	return actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *watchThem:
			for _, p := range m.pids {
				c.Watch(p)
			}
			c.Respond(&pong{})
		case *actor.Terminated:
			gone()
		}
	})
}

// tracker is a member's transport: loopback TCP that remembers its open
// connections so that reset can close them all, both directions, as a
// connection reset would. A connection leaves the set when it is closed,
// so the tracker itself does not grow.
type tracker struct {
	inner remote.TCPTransport
	mu    sync.Mutex
	conns map[*trackedConn]struct{}
}

func newTracker() *tracker { return &tracker{conns: map[*trackedConn]struct{}{}} }

// trackedConn embeds the *net.TCPConn so that remote still sees a
// syscall.Conn (its direct writes).
type trackedConn struct {
	*net.TCPConn
	t *tracker
}

func (c *trackedConn) Close() error {
	c.t.mu.Lock()
	delete(c.t.conns, c)
	c.t.mu.Unlock()
	return c.TCPConn.Close()
}

type trackedListener struct {
	net.Listener
	t *tracker
}

func (l *trackedListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return l.t.track(c), nil
}

func (t *tracker) track(c net.Conn) net.Conn {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c
	}
	w := &trackedConn{TCPConn: tc, t: t}
	t.mu.Lock()
	t.conns[w] = struct{}{}
	t.mu.Unlock()
	return w
}

func (t *tracker) Listen(ctx context.Context, address string) (net.Listener, error) {
	ln, err := t.inner.Listen(ctx, address)
	if err != nil {
		return nil, err
	}
	return &trackedListener{Listener: ln, t: t}, nil
}

func (t *tracker) Dial(ctx context.Context, address string) (net.Conn, error) {
	c, err := t.inner.Dial(ctx, address)
	if err != nil {
		return nil, err
	}
	return t.track(c), nil
}

// reset closes every open connection with an RST and returns how many.
func (t *tracker) reset() int {
	t.mu.Lock()
	cs := make([]*trackedConn, 0, len(t.conns))
	for c := range t.conns {
		cs = append(cs, c)
	}
	t.mu.Unlock()
	for _, c := range cs {
		_ = c.SetLinger(0)
		_ = c.Close()
	}
	return len(cs)
}

// member is one running incarnation.
type member struct {
	id   string
	sys  *actor.System
	c    *cluster.Cluster
	node *remote.Node
	tr   *tracker
	echo *actor.PID // a long-lived echo actor (connectivity checks)
	sink *actor.PID // a long-lived actor that never answers
}

// harness runs the three members and the churn.
type harness struct {
	t       *testing.T
	reg     *cluster.MemoryRegistry
	log     *slog.Logger
	members [3]*member
	nextID  int // for members under new IDs
	stats   churnStats

	// shut are the systems of the incarnations shut down so far: once
	// gone, nothing of the live members may keep them reachable.
	shut []weak.Pointer[actor.System]

	mu        sync.Mutex
	abandoned []*actor.Future // futures nobody reads; the checkpoint waits for them to time out
}

// churnStats counts what the rounds did.
type churnStats struct {
	requests, requestFailures, sends, timeouts, abandoned int
	spawned, terminated, deadLettersSent, resets          int
	restarts, newIDs, crashes, fences                     int
}

func newHarness(t *testing.T) *harness {
	rcfg := testkit.FastRegistry()
	rcfg.ReleasedRetention = *soakReleased
	reg, err := cluster.NewMemoryRegistry(rcfg)
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, reg: reg, log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, m := range h.members {
			if m != nil {
				_ = m.sys.Shutdown(ctx)
			}
		}
		reg.Close()
	})
	for i := range h.members {
		m, err := h.start(fmt.Sprintf("m%d", i))
		if err != nil {
			t.Fatal(err)
		}
		h.members[i] = m
	}
	h.awaitConverged()
	return h
}

// start starts a member with the given member ID on a fresh port.
func (h *harness) start(id string) (*member, error) {
	ser := remote.NewSerializers()
	if err := registerMessages(ser); err != nil {
		return nil, err
	}
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers, rcfg.Logger = "127.0.0.1:0", clusterName, ser, h.log
	rcfg.ReconnectBackoffMin = 5 * time.Millisecond
	rcfg.ReconnectBackoffMax = 100 * time.Millisecond
	rcfg.HeartbeatInterval = 100 * time.Millisecond
	rcfg.HeartbeatTimeout = 2 * time.Second
	rcfg.GiveUpAfter = 2 * time.Second
	ccfg := cluster.Config{Name: clusterName, Provider: h.reg, MemberID: id, Kinds: []cluster.Kind{itemKind()}}
	testkit.FastTiming(&ccfg)
	tr := newTracker()
	sys, err := actor.NewSystem(actor.SystemConfig{
		Name: clusterName, Logger: h.log,
		Extensions: []actor.ExtensionInstaller{remote.Install(rcfg, remote.WithTransport(tr)), cluster.Install(ccfg)},
	})
	if err != nil {
		return nil, fmt.Errorf("soak: start %s: %w", id, err)
	}
	m := &member{id: id, sys: sys, c: cluster.Get(sys), node: remote.Get(sys).Node(), tr: tr}
	m.echo, err = sys.Root().SpawnNamed(echoProps, "echo")
	if err == nil {
		m.sink, err = sys.Root().SpawnNamed(sinkProps, "sink")
	}
	if err != nil {
		_ = sys.Shutdown(context.Background())
		return nil, err
	}
	return m, nil
}

// awaitConverged waits until every member is ready and settled with a view
// of the three.
func (h *harness) awaitConverged() {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, m := range h.members {
		if err := m.c.WaitForMembers(ctx, 3); err != nil {
			h.t.Fatalf("soak: member %s: %v", m.id, err)
		}
	}
	testkit.Eventually(h.t, func() bool {
		for _, m := range h.members {
			if len(m.c.Members()) != 3 || !m.c.Settled() {
				return false
			}
		}
		return true
	}, 30*time.Second, "members did not converge on a view of three")
}

// replace ends member i's incarnation and starts its next one: under the
// same member ID, or a new one when newID. The old one leaves gracefully
// (its grains move at once, a released marker tells the others), or with
// crash it dies as a killed process does: its registry lease is no longer
// renewed and its connections drop, and the others take its grains over
// once its lease expired and the wait-out passed.
func (h *harness) replace(i int, newID, crash bool) {
	h.t.Helper()
	old := h.members[i]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if crash {
		key := old.c.Self().Key()
		h.reg.Partition(key)
		gone, stop := context.WithCancel(context.Background())
		stop() // no grace for a crash
		_ = old.node.Close(gone)
		_ = old.sys.Shutdown(ctx) // its leave cannot reach the registry
		h.reg.Heal(key)           // the registry forgets the cut; the entry expires
		h.stats.crashes++
	} else if err := old.sys.Shutdown(ctx); err != nil {
		h.t.Fatalf("soak: shut %s down: %v", old.id, err)
	}
	h.shut = append(h.shut, weak.Make(old.sys))
	id := old.id
	if newID {
		h.nextID++
		id = fmt.Sprintf("n%d", h.nextID)
		h.stats.newIDs++
	} else {
		h.stats.restarts++
	}
	m, err := h.start(id)
	if err != nil {
		h.t.Fatal(err)
	}
	h.members[i] = m
	h.awaitConverged()
}

// fence cuts member i off the registry until it fences itself, then heals
// the cut: the member, a system that lives on, rejoins as a new
// incarnation (and retires the fenced one).
func (h *harness) fence(i int) {
	h.t.Helper()
	m := h.members[i]
	es := m.sys.EventStream()
	fenced := make(chan struct{}, 1)
	sub := actor.Subscribe(es, func(*cluster.Fenced) {
		select {
		case fenced <- struct{}{}:
		default:
		}
	})
	defer es.Unsubscribe(sub)
	key := m.c.Self().Key()
	h.reg.Partition(key)
	select {
	case <-fenced:
	case <-time.After(30 * time.Second):
		h.t.Fatalf("soak: %s did not fence", key)
	}
	h.reg.Heal(key)
	h.stats.fences++
	h.awaitConverged()
	if m.c.Self().Key() == key {
		h.t.Fatalf("soak: %s rejoined as the same incarnation", key)
	}
}

func (h *harness) abandon(f *actor.Future) {
	h.mu.Lock()
	h.abandoned = append(h.abandoned, f)
	h.stats.abandoned++
	h.mu.Unlock()
}

// awaitAbandoned waits until every abandoned future has completed (they
// all carry a timeout) and forgets them.
func (h *harness) awaitAbandoned() {
	h.t.Helper()
	h.mu.Lock()
	fs := h.abandoned
	h.abandoned = nil
	h.mu.Unlock()
	deadline := time.After(30 * time.Second)
	for _, f := range fs {
		select {
		case <-f.Done():
		case <-deadline:
			h.t.Fatalf("soak: an abandoned future never completed")
		}
	}
}

// reachable returns how many of the systems shut down so far are still
// reachable (call it after a GC).
func (h *harness) reachable() int {
	n := 0
	for _, w := range h.shut {
		if w.Value() != nil {
			n++
		}
	}
	return n
}
