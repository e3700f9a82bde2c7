package remote_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// partitionTransport is TCP that a test can cut, as a network partition
// would: cut closes every socket it dialed and refuses dials until heal.
type partitionTransport struct {
	remote.TCPTransport
	down  atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
}

var errPartitioned = errors.New("test: partitioned")

func (p *partitionTransport) Dial(ctx context.Context, address string) (net.Conn, error) {
	if p.down.Load() {
		return nil, errPartitioned
	}
	c, err := p.TCPTransport.Dial(ctx, address)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.conns = append(p.conns, c)
	p.mu.Unlock()
	return c, nil
}

func (p *partitionTransport) cut() {
	p.down.Store(true)
	p.mu.Lock()
	cs := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range cs {
		_ = c.Close()
	}
}

func (p *partitionTransport) heal() { p.down.Store(false) }

// watcherAcrossPartition is node b (GiveUpAfter an hour, on clock) with an
// echo actor x, and node p (the wall clock, GiveUpAfter an hour: p never
// gives up in a test) whose probe watches x by a WatchRequest alone, so
// that b never sends to p: b's endpoint for p is unused, and retired when
// the partition ends its connection.
type watcherAcrossPartition struct {
	cfgB   remote.Config
	clockB *scheduler.ManualClock
	sysB   *actor.System
	rb, rp *remote.Remote
	sysP   *actor.System
	x      *actor.PID // as p sees it
	probe  *testkit.Probe
	tr     *partitionTransport // p's
	endsB  <-chan *remote.EndpointTerminated
	drops  <-chan *remote.WatchesDroppedEvent // p's
}

func newWatcherAcrossPartition(t *testing.T) *watcherAcrossPartition {
	t.Helper()
	w := &watcherAcrossPartition{cfgB: testConfig(t), clockB: scheduler.NewManualClock(time.Now()), tr: &partitionTransport{}}
	w.cfgB.GiveUpAfter = time.Hour
	w.sysB, w.rb = startSystem(t, "b", w.cfgB, remote.WithClock(w.clockB))
	w.x = remotePID(echoOn(t, w.sysB, "x", "b"))
	w.endsB = events[*remote.EndpointTerminated](t, w.sysB)
	cfgP := testConfig(t)
	cfgP.GiveUpAfter = time.Hour
	w.sysP, w.rp = startSystem(t, "p", cfgP, remote.WithTransport(w.tr))
	w.drops = events[*remote.WatchesDroppedEvent](t, w.sysP)
	w.probe = testkit.NewProbe(t, w.sysP)
	w.probe.Watch(w.x)
	require.Eventually(t, func() bool { _, in := w.rb.WatchCounts(); return in == 1 }, wait, time.Millisecond)
	return w
}

// partition cuts p off and waits until b has retired its endpoint for p.
func (w *watcherAcrossPartition) partition(t *testing.T) {
	t.Helper()
	w.tr.cut()
	require.Eventually(t, func() bool { return w.rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)
}

// healed ends the partition and waits until p has connected to b again
// (p redials on its own: it sent the watch).
func (w *watcherAcrossPartition) healed(t *testing.T) {
	t.Helper()
	w.tr.heal()
	require.Eventually(t, func() bool { return w.rb.Node().Stats().Connections == 1 }, wait, time.Millisecond)
}

// stopX stops x on b.
func (w *watcherAcrossPartition) stopX(t *testing.T) {
	t.Helper()
	_, err := w.sysB.Root().StopFuture(actor.NewPID(w.rb.Address(), "x")).Result()
	require.NoError(t, err)
}

// nothingMoreFrom checks, without waiting for time to pass, that sender's
// node has sent probe nothing more: it sends two markers over the
// connection, the second once the first arrived. A Terminated sent before
// the first marker reaches the probe's mailbox before the second one (a
// Terminated goes through the watcher's system queue, which its mailbox
// runs first, and then joins the user messages queued at that time).
func nothingMoreFrom(t *testing.T, sender *actor.System, probe *testkit.Probe) {
	t.Helper()
	for _, text := range []string{"marker 1", "marker 2"} {
		sender.Root().Send(remotePID(probe.PID()), &Echo{Text: text})
		assert.Equal(t, &Echo{Text: text}, testkit.ExpectMsg[*Echo](probe, wait))
	}
}

// TestReturnAfterGiveUpLearnsItsWatchesGone: p watches x on b; a partition
// keeps p away past b's GiveUpAfter, so b reports p terminated and drops
// p's watch; then the same incarnation of p (its node ID) connects again.
// b's first envelope on the new connection tells p that its watches there
// are gone, and p's watcher gets Terminated{AddressTerminated}, as if b had
// been lost, and nothing more when x stops. Before, p still believed its
// watch in place and its watcher never heard of x's stop: no Terminated
// at all.
func TestReturnAfterGiveUpLearnsItsWatchesGone(t *testing.T) {
	w := newWatcherAcrossPartition(t)
	w.partition(t)
	w.clockB.Advance(w.cfgB.GiveUpAfter)
	ev := waitFor(t, w.endsB, "p reported terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	require.Equal(t, w.rp.NodeID(), ev.NodeID)
	_, in := w.rb.WatchCounts()
	require.Zero(t, in, "b dropped p's watch when it reported p")
	out, _ := w.rp.WatchCounts()
	require.Equal(t, 1, out, "p still holds its watch")

	w.healed(t)
	w.stopX(t)
	term := w.probe.ExpectTerminated(w.x, wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	drop := waitFor(t, w.drops, "watches dropped event", nil)
	assert.Equal(t, remote.WatchesDroppedEvent{Address: w.rb.Address(), NodeID: w.rb.NodeID(), Watchers: 1}, *drop)
	out, _ = w.rp.WatchCounts()
	assert.Zero(t, out)
	// Exactly one Terminated: x's stop sent none (b held no watch of p's).
	nothingMoreFrom(t, w.sysB, w.probe)
	_, in = w.rb.WatchCounts()
	assert.Zero(t, in)
}

// TestReturnWithinGiveUpKeepsItsWatches: the same partition, but p is back
// before b's GiveUpAfter: b has reported nothing, the watch stays on both
// sides (no notice), and x's stop gives p's watcher exactly one
// Terminated{Stopped}.
func TestReturnWithinGiveUpKeepsItsWatches(t *testing.T) {
	w := newWatcherAcrossPartition(t)
	w.partition(t)
	w.clockB.Advance(w.cfgB.GiveUpAfter - time.Minute)
	w.healed(t)
	w.clockB.Advance(time.Hour) // the retired deadline was stopped on p's return
	_, in := w.rb.WatchCounts()
	assert.Equal(t, 1, in)

	w.stopX(t)
	term := w.probe.ExpectTerminated(w.x, wait)
	assert.Equal(t, actor.TerminatedStopped, term.Why)
	nothingMoreFrom(t, w.sysB, w.probe)
	select {
	case ev := <-w.endsB:
		t.Fatalf("p reported terminated: %+v", ev)
	case ev := <-w.drops:
		t.Fatalf("watches dropped: %+v", ev)
	default:
	}
	out, _ := w.rp.WatchCounts()
	assert.Zero(t, out)
}

// TestWatcheeSideLearnsWatchesGone is the other direction: b's probe
// watches y on p; b gives up on p (its endpoint, which sent the watch, was
// unreachable for GiveUpAfter), tells its probe Terminated and forgets the
// watch. p, which never sent to b, kept b's watcher in its table and in y.
// When b connects to p again, its first envelope tells p, which forgets
// b's watcher (y too): y's stop sends nothing to b. Before, p kept the
// watch until y stopped, and its Terminated went to a watcher that had
// long been told.
func TestWatcheeSideLearnsWatchesGone(t *testing.T) {
	cfgB := testConfig(t)
	cfgB.GiveUpAfter = time.Hour
	clockB := scheduler.NewManualClock(time.Now())
	tr := &partitionTransport{}
	sysB, rb := startSystem(t, "b", cfgB, remote.WithClock(clockB), remote.WithTransport(tr))
	endsB := events[*remote.EndpointTerminated](t, sysB)
	transport := events[*remote.Event](t, sysB)
	cfgP := testConfig(t)
	cfgP.GiveUpAfter = time.Hour
	sysP, rp := startSystem(t, "p", cfgP)
	drops := events[*remote.WatchesDroppedEvent](t, sysP)
	y := echoOn(t, sysP, "y", "p")
	probe := testkit.NewProbe(t, sysB)
	probe.Watch(remotePID(y))
	require.Eventually(t, func() bool { _, in := rp.WatchCounts(); return in == 1 }, wait, time.Millisecond)

	tr.cut()
	waitFor(t, transport, "a refused dial", func(e *remote.Event) bool { return e.Kind == remote.EventDialFailed })
	// p has seen the connection end too: else it refuses b's next one
	// while it checks the old one, and b's redial waits on its manual
	// clock.
	require.Eventually(t, func() bool { return rp.Node().Stats().Connections == 0 }, wait, time.Millisecond)
	clockB.Advance(cfgB.GiveUpAfter)
	ev := waitFor(t, endsB, "p reported terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	term := probe.ExpectTerminated(remotePID(y), wait)
	require.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	out, _ := rb.WatchCounts()
	require.Zero(t, out)
	_, in := rp.WatchCounts()
	require.Equal(t, 1, in, "p still holds b's watcher")

	tr.heal()
	_, err := actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remotePID(y), &Echo{Text: "back"})
	require.NoError(t, err)
	drop := waitFor(t, drops, "watches dropped event", nil)
	assert.Equal(t, remote.WatchesDroppedEvent{Address: rb.Address(), NodeID: rb.NodeID(), RemoteWatchers: 1}, *drop)
	_, in = rp.WatchCounts()
	assert.Zero(t, in)

	// y's stop tells b's probe nothing more.
	_, err = sysP.Root().StopFuture(y).Result()
	require.NoError(t, err)
	nothingMoreFrom(t, sysP, probe)
}

// TestWatchesDroppedNoticeTaken: what a node does with a *WatchesDropped
// from a peer (a bare node here, playing one that reported this node
// gone). A notice naming another incarnation (one written to this node's
// predecessor at its address) changes nothing. One naming this node ends
// every watch across the link: the local watcher of a process on the peer
// gets Terminated{AddressTerminated}, and the peer an UnwatchRequest for
// it (a Watch sent on the new connection before the notice was read
// holds there).
func TestWatchesDroppedNoticeTaken(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	got := make(chan remote.Envelope, 16)
	cfg := remote.NodeTestConfig()
	cfg.Serializers = newSerializers(t, false)
	peer, err := remote.NewNode(cfg, remote.Hooks{Deliver: func(_ remote.Peer, env remote.Envelope) { got <- env }})
	require.NoError(t, err)
	require.NoError(t, peer.Start(ctxWait(t)))
	t.Cleanup(func() { _ = peer.Close(ctxWait(t)) })
	next := func() remote.Envelope {
		t.Helper()
		select {
		case env := <-got:
			return env
		case <-time.After(wait):
			t.Fatal("the peer got nothing")
			return remote.Envelope{}
		}
	}

	probe := testkit.NewProbe(t, sysA)
	w := actor.NewPID(peer.Address(), "w")
	probe.Watch(w)
	req := next()
	require.IsType(t, &remote.WatchRequest{}, req.Message)
	notice := func(id string) {
		require.NoError(t, peer.Send(ra.Address(), remote.Envelope{Target: remote.PIDRef{Address: ra.Address()}, Message: &remote.WatchesDropped{NodeID: id}}))
	}

	notice("another-incarnation")
	// The echo's answer comes after a has handled the notice (one
	// connection, in order).
	require.NoError(t, peer.Send(ra.Address(), remote.Envelope{Target: remote.PIDRef{Address: ra.Address(), ID: "echo"},
		Sender: remote.PIDRef{Address: peer.Address(), ID: "s"}, Message: &Echo{Text: "sync"}}))
	require.IsType(t, &EchoReply{}, next().Message)
	out, _ := ra.WatchCounts()
	require.Equal(t, 1, out, "a notice for another incarnation ended the watch")

	notice(ra.NodeID())
	term := probe.ExpectTerminated(w, wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	unwatch := next()
	assert.Equal(t, &remote.UnwatchRequest{Watcher: req.Message.(*remote.WatchRequest).Watcher, Watchee: remote.PIDRef{Address: peer.Address(), ID: "w"}}, unwatch.Message)
	out, _ = ra.WatchCounts()
	assert.Zero(t, out)
}

// TestUnblockedPeerLearnsItsWatchesGone: b blocks p, whose probe watches
// x: b reports p terminated (ErrBlocked) and drops p's watch. Once b
// unblocks p, p's redial gets in with the same node ID, and b's first
// envelope tells it: its watcher gets Terminated{AddressTerminated}.
// Before, it waited for x's Terminated for ever.
func TestUnblockedPeerLearnsItsWatchesGone(t *testing.T) {
	w := newWatcherAcrossPartition(t)
	w.rb.BlockList().Block(w.rp.NodeID())
	ev := waitFor(t, w.endsB, "p reported terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrBlocked)
	_, in := w.rb.WatchCounts()
	require.Zero(t, in)

	w.rb.BlockList().Unblock(w.rp.NodeID())
	w.stopX(t)
	term := w.probe.ExpectTerminated(w.x, wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	waitFor(t, w.drops, "watches dropped event", nil)
	nothingMoreFrom(t, w.sysB, w.probe)
}
