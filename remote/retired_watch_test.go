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

// TestRetiredWatcherGoneEndsItsWatches: a peer that watched a local actor,
// and that this node never sent to, crashes. Its endpoint here is retired
// (not redialled); once it has not come back for GiveUpAfter it is
// reported terminated, which ends its watch entries, without a dial.
// Before, the entries stayed until the watchee stopped, whose Terminated
// then had the node dial the departed address until GiveUpAfter.
func TestRetiredWatcherGoneEndsItsWatches(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	tr := &dialCounter{}
	sysB, rb := startSystem(t, "b", cfg, remote.WithClock(clock), remote.WithTransport(tr))
	echoOn(t, sysB, "x", "b")
	ends := events[*remote.EndpointTerminated](t, sysB)
	peer, _ := barePeer(t)
	watchFrom(t, peer, rb, "x")

	crashNode(peer)
	require.Eventually(t, func() bool { return rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)
	clock.Advance(cfg.GiveUpAfter - time.Second)
	_, in := rb.WatchCounts()
	assert.Equal(t, 1, in, "ended before GiveUpAfter")
	clock.Advance(time.Second)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	assert.Equal(t, peer.Address(), ev.Address)
	assert.Equal(t, peer.NodeID(), ev.NodeID)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	_, in = rb.WatchCounts()
	assert.Zero(t, in)
	assert.Zero(t, tr.dials.Load())
}

// TestRetiredWatcherBackKeepsItsWatches: the watching peer's connection
// ends, and the same incarnation (node ID) connects again before
// GiveUpAfter: its watch stays, also once GiveUpAfter has passed.
func TestRetiredWatcherBackKeepsItsWatches(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	sysB, rb := startSystem(t, "b", cfg, remote.WithClock(clock))
	echoOn(t, sysB, "x", "b")
	ends := events[*remote.EndpointTerminated](t, sysB)
	peer, _ := barePeer(t)
	watchFrom(t, peer, rb, "x")
	addr, id := peer.Address(), peer.NodeID()

	crashNode(peer)
	require.Eventually(t, func() bool { return rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)
	clock.Advance(time.Minute)

	// The same incarnation, back at its address.
	pcfg := remote.NodeTestConfig()
	pcfg.Serializers = newSerializers(t, false)
	pcfg.ListenAddress, pcfg.NodeID = addr, id
	back, err := remote.NewNode(pcfg, remote.Hooks{})
	require.NoError(t, err)
	require.NoError(t, back.Start(ctxWait(t)))
	t.Cleanup(func() { _ = back.Close(ctxWait(t)) })
	require.NoError(t, back.Send(rb.Address(), remote.Envelope{Target: remote.PIDRef{Address: rb.Address(), ID: "x"}, Message: &Echo{Text: "back"}}))
	require.Eventually(t, func() bool { return rb.Node().Stats().Connections == 1 }, wait, time.Millisecond)

	clock.Advance(cfg.GiveUpAfter)
	_, in := rb.WatchCounts()
	assert.Equal(t, 1, in)
	select {
	case ev := <-ends:
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
	cfg := testConfig(t)
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	sysB, rb := startSystem(t, "b", cfg, remote.WithClock(clock))
	echoOn(t, sysB, "x", "b")
	ends := events[*remote.EndpointTerminated](t, sysB)
	peer, _ := barePeer(t)
	watchFrom(t, peer, rb, "x")
	addr, id := peer.Address(), peer.NodeID()
	crashNode(peer)
	require.Eventually(t, func() bool { return rb.Node().Stats().Endpoints == 0 }, wait, time.Millisecond)

	pcfg := remote.NodeTestConfig()
	pcfg.Serializers = newSerializers(t, false)
	pcfg.ListenAddress = addr
	next, err := remote.NewNode(pcfg, remote.Hooks{})
	require.NoError(t, err)
	require.NoError(t, next.Start(ctxWait(t)))
	t.Cleanup(func() { _ = next.Close(ctxWait(t)) })
	require.NoError(t, next.Send(rb.Address(), remote.Envelope{Target: remote.PIDRef{Address: rb.Address(), ID: "x"}, Message: &Echo{Text: "new"}}))
	ev := waitFor(t, ends, "endpoint terminated", nil)
	assert.Equal(t, id, ev.NodeID)
	assert.ErrorIs(t, ev.Reason, remote.ErrPeerRestarted)
	_, in := rb.WatchCounts()
	assert.Zero(t, in)

	clock.Advance(cfg.GiveUpAfter)
	select {
	case ev := <-ends:
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
