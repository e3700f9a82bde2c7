package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
)

// watchFrom has peer watch the process id of r's node, by a WatchRequest
// alone (nothing makes r's node send to peer), and waits until r holds it.
func watchFrom(t *testing.T, peer *remote.Node, r *remote.Remote, id string) {
	t.Helper()
	watchee := remote.PIDRef{Address: r.Address(), ID: id}
	require.NoError(t, peer.Send(r.Address(), remote.Envelope{Target: watchee,
		Message: &remote.WatchRequest{Watcher: remote.PIDRef{Address: peer.Address(), ID: "w"}, Watchee: watchee}}))
	require.Eventually(t, func() bool { _, in := r.WatchCounts(); return in == 1 }, wait, time.Millisecond)
}

// crashedWatcher is node b (GiveUpAfter an hour, on clock) whose actor x
// was watched by a peer that then crashed: b has retired the peer's
// endpoint. ends gets b's EndpointTerminated events.
type crashedWatcher struct {
	cfg      remote.Config
	clock    *scheduler.ManualClock
	rb       *remote.Remote
	ends     <-chan *remote.EndpointTerminated
	addr, id string // the crashed peer's address and node ID
}

func newCrashedWatcher(t *testing.T, opts ...remote.Option) crashedWatcher {
	t.Helper()
	w := crashedWatcher{cfg: testConfig(t), clock: scheduler.NewManualClock(time.Now())}
	w.cfg.GiveUpAfter = time.Hour
	sysB, rb := startSystem(t, "b", w.cfg, append(opts, remote.WithClock(w.clock))...)
	echoOn(t, sysB, "x", "b")
	w.rb, w.ends = rb, events[*remote.EndpointTerminated](t, sysB)
	peer, _ := barePeer(t)
	watchFrom(t, peer, rb, "x")
	w.addr, w.id = peer.Address(), peer.NodeID()
	crashNode(peer)
	require.Eventually(t, func() bool { return rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)
	return w
}

// comeBack starts a node at the crashed peer's address, with node ID id
// ("" for a new one), that sends to x.
func (w crashedWatcher) comeBack(t *testing.T, id string) {
	t.Helper()
	pcfg := remote.NodeTestConfig()
	pcfg.Serializers = newSerializers(t, false)
	pcfg.ListenAddress, pcfg.NodeID = w.addr, id
	n, err := remote.NewNode(pcfg, remote.Hooks{})
	require.NoError(t, err)
	require.NoError(t, n.Start(ctxWait(t)))
	t.Cleanup(func() { _ = n.Close(ctxWait(t)) })
	require.NoError(t, n.Send(w.rb.Address(), remote.Envelope{Target: remote.PIDRef{Address: w.rb.Address(), ID: "x"}, Message: &Echo{Text: "back"}}))
}

// TestRetiredWatcherGoneEndsItsWatches: a peer that watched a local actor,
// and that this node never sent to, crashes. Its endpoint here is retired
// (not redialled); once it has not come back for GiveUpAfter it is
// reported terminated, which ends its watch entries, without a dial.
// Before, the entries stayed until the watchee stopped, whose Terminated
// then had the node dial the departed address until GiveUpAfter.
func TestRetiredWatcherGoneEndsItsWatches(t *testing.T) {
	tr := &dialCounter{}
	w := newCrashedWatcher(t, remote.WithTransport(tr))
	w.clock.Advance(w.cfg.GiveUpAfter - time.Second)
	_, in := w.rb.WatchCounts()
	assert.Equal(t, 1, in, "ended before GiveUpAfter")
	w.clock.Advance(time.Second)
	ev := waitFor(t, w.ends, "endpoint terminated", nil)
	assert.Equal(t, w.addr, ev.Address)
	assert.Equal(t, w.id, ev.NodeID)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	_, in = w.rb.WatchCounts()
	assert.Zero(t, in)
	assert.Zero(t, tr.dials.Load())
}

// TestRetiredWatcherBackKeepsItsWatches: the watching peer's connection
// ends, and the same incarnation (node ID) connects again before
// GiveUpAfter: its watch stays, also once GiveUpAfter has passed.
func TestRetiredWatcherBackKeepsItsWatches(t *testing.T) {
	w := newCrashedWatcher(t)
	w.clock.Advance(time.Minute)
	w.comeBack(t, w.id) // the same incarnation, back at its address
	require.Eventually(t, func() bool { return w.rb.Node().Stats().Connections == 1 }, wait, time.Millisecond)

	w.clock.Advance(w.cfg.GiveUpAfter)
	_, in := w.rb.WatchCounts()
	assert.Equal(t, 1, in)
	select {
	case ev := <-w.ends:
		t.Fatalf("reported terminated: %+v", ev)
	default:
	}
}

// TestRetiredWatcherRestartedEndsItsWatches: after the watching peer's
// connection ended, a new incarnation (another node ID) connects from its
// address before GiveUpAfter: the old one is reported restarted at once,
// which ends its watches; the deadline that comes later reports nothing
// more.
func TestRetiredWatcherRestartedEndsItsWatches(t *testing.T) {
	w := newCrashedWatcher(t)
	w.comeBack(t, "")
	ev := waitFor(t, w.ends, "endpoint terminated", nil)
	assert.Equal(t, w.id, ev.NodeID)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerRestarted)
	_, in := w.rb.WatchCounts()
	assert.Zero(t, in)

	w.clock.Advance(w.cfg.GiveUpAfter)
	select {
	case ev := <-w.ends:
		t.Fatalf("reported again: %+v", ev)
	default:
	}
}

// crashNode closes n's connections without a goodbye, as if its process had
// died.
func crashNode(n *remote.Node) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = n.Close(ctx)
}

// TestRetiredWatcherBeyondTheBoundReported: with room for one retired
// record, a second watching peer that crashes pushes the first one's
// record out: the first is reported terminated then (its watch ends), not
// forgotten with its watch kept until the watchee stops.
func TestRetiredWatcherBeyondTheBoundReported(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Hour
	sysB, rb := startSystem(t, "b", cfg, remote.WithClock(scheduler.NewManualClock(time.Now())))
	echoOn(t, sysB, "x", "b")
	ends := events[*remote.EndpointTerminated](t, sysB)
	rb.Node().SetPeersCapForTest(1)
	watchee := remote.PIDRef{Address: rb.Address(), ID: "x"}
	var peers []*remote.Node
	for i := range 2 {
		peer, _ := barePeer(t)
		require.NoError(t, peer.Send(rb.Address(), remote.Envelope{Target: watchee,
			Message: &remote.WatchRequest{Watcher: remote.PIDRef{Address: peer.Address(), ID: "w"}, Watchee: watchee}}))
		require.Eventually(t, func() bool { _, in := rb.WatchCounts(); return in == i+1 }, wait, time.Millisecond)
		crashNode(peer)
		require.Eventually(t, func() bool { return rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)
		peers = append(peers, peer)
	}
	ev := waitFor(t, ends, "endpoint terminated", nil)
	assert.Equal(t, peers[0].Address(), ev.Address)
	assert.Equal(t, peers[0].NodeID(), ev.NodeID)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	_, in := rb.WatchCounts()
	assert.Equal(t, 1, in, "the second peer's watch only")
}
