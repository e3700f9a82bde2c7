package remote

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/watchhook"
	"github.com/fraktor-go/fraktor/scheduler"
)

// TestRetiredWatcherDeadlineSurvivesFailedHandshake: a watching peer's
// endpoint was retired; a handshake claiming its address (and node ID)
// is admitted, which hands the retired record to a new endpoint, and is
// still pending when the deadline comes, so the deadline finds the peer
// possibly back and reports nothing. The handshake then fails: the record
// is restored, its deadline has passed, and the peer is reported
// terminated then, ending its watch. Without the restore, the record was
// lost with the failed endpoint and the watch stayed for good.
func TestRetiredWatcherDeadlineSurvivesFailedHandshake(t *testing.T) {
	cfg := testConfig()
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "b", Extensions: []actor.ExtensionInstaller{Install(cfg, WithClock(clock))}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	r := Get(sys)
	x, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "x")
	require.NoError(t, err)
	const addr = "127.0.0.1:1001"

	first := dialRaw(t, r.Address())
	kind, _ := first.claim("w", addr)
	require.Equal(t, kindWelcome, kind)
	watcher := actor.NewPID(addr, "w")
	s, ok, _ := r.watches.watchInbound(watchKey{watcher: r.ref(watcher), watchee: r.ref(x)}, watchEntry{watcher: watcher, watchee: x})
	require.True(t, ok)
	proc, ok := r.sys.Lookup(x.ID)
	require.True(t, ok)
	watchhook.Post(proc, x, watcher, s)
	require.Eventually(t, func() bool { return r.node.Stats().Connections == 1 }, waitTimeout, time.Millisecond)
	require.NoError(t, first.c.Close())
	require.Eventually(t, func() bool { return r.node.Stats().Endpoints == 0 }, waitTimeout, time.Millisecond)

	// A handshake claiming the address is admitted (welcome) and left
	// without its ack while the deadline passes.
	second := dialRaw(t, r.Address())
	second.write(appendFrame(nil, kindHello, (&hello{Version: ProtocolVersion, SystemName: "fraktor", NodeID: "w", Address: addr}).append(nil)))
	kind, _, err = second.fr.next()
	require.NoError(t, err)
	require.Equal(t, kindWelcome, kind)
	clock.Advance(cfg.GiveUpAfter)
	_, in := r.WatchCounts()
	require.Equal(t, 1, in, "reported while a handshake that may bring the peer back was pending")

	require.NoError(t, second.c.Close())
	require.Eventually(t, func() bool { _, in := r.WatchCounts(); return in == 0 }, waitTimeout, time.Millisecond)
}

// TestRetiredBounded: the retired records stay under peersCap; at the cap
// the records without a deadline go first, and when every record has one,
// a new record without one is not kept, and for a new one with a deadline
// the one due first goes and is returned, for its peer to be reported
// terminated now. Before, all records went with their deadlines stopped,
// which left those peers' watches until each watchee stopped.
func TestRetiredBounded(t *testing.T) {
	clock := scheduler.NewManualClock(time.Now())
	n := &Node{cfg: testConfig(), clock: clock, retired: map[string]*retiredPeer{}, peersCap: 2}
	ep := func(addr string) *endpoint { return &endpoint{addr: addr, peer: "id-" + addr} }
	require.Zero(t, n.retire(ep("a"), true).rec)
	clock.Advance(time.Second)
	require.Zero(t, n.retire(ep("b"), false).rec)
	require.Zero(t, n.retire(ep("c"), true).rec) // at the cap: b (no deadline) goes
	require.Len(t, n.retired, 2)
	require.Contains(t, n.retired, "a")
	require.Contains(t, n.retired, "c")
	require.Equal(t, 2, clock.Pending())
	require.Zero(t, n.retire(ep("d"), false).rec) // every record has a deadline: d is not kept
	require.Len(t, n.retired, 2)
	require.NotContains(t, n.retired, "d")
	require.Equal(t, 2, clock.Pending())
	ev := n.retire(ep("e"), true) // a's deadline comes first
	require.NotNil(t, ev.rec, "no record evicted for its peer to be reported")
	require.Equal(t, "a", ev.addr)
	require.Equal(t, "id-a", ev.rec.id)
	require.Len(t, n.retired, 2)
	require.Contains(t, n.retired, "c")
	require.Contains(t, n.retired, "e")
	require.Equal(t, 2, clock.Pending(), "the evicted record's deadline still armed, or c's stopped")
}

// TestRetiredDeadlineStoppedOnReturn: a retired watcher's record taken by a
// new endpoint whose connection is established (the peer came back) has
// its deadline stopped. Before, it stayed armed until GiveUpAfter, and a
// peer that connected and left again and again (each end retiring its
// endpoint anew, with a new deadline) piled up one armed timer per
// connection.
func TestRetiredDeadlineStoppedOnReturn(t *testing.T) {
	clock := scheduler.NewManualClock(time.Now())
	n := &Node{cfg: testConfig(), clock: clock, bl: NewBlockList(), retired: map[string]*retiredPeer{},
		peerIDs: map[string]string{}, raws: map[net.Conn]rawState{}, peersCap: maxKnownPeers}
	for i := range 3 {
		n.mu.Lock()
		n.retire(&endpoint{addr: "a:1", peer: "id-a"}, true)
		require.Equal(t, 1, clock.Pending(), "connection %d", i)
		back := &endpoint{addr: "a:1"}
		n.takeRetired(back)
		n.mu.Unlock()
		n.markEstablished(back, nil, hello{Address: "a:1", NodeID: "id-a"})
		require.Zero(t, clock.Pending(), "connection %d: the deadline of a peer that came back is still armed", i)
	}
	// An endpoint that took the record and ends (it gave up and reported
	// the peer, or the Node closes) stops it too: it would fire after Close.
	n.endpoints = map[string]*endpoint{}
	n.mu.Lock()
	n.retire(&endpoint{addr: "a:1", peer: "id-a"}, true)
	gone := &endpoint{addr: "a:1"}
	n.takeRetired(gone)
	n.mu.Unlock()
	n.removeEndpoint(gone)
	require.Zero(t, clock.Pending(), "the deadline of a record taken by an endpoint that ended is still armed")
}
