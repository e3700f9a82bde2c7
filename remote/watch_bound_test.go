package remote_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// watchPeer is a bare Node speaking the wire to a remote-enabled system:
// it sends WatchRequests for watchers at its own address and collects the
// TerminatedNotices it is sent.
type watchPeer struct {
	t       *testing.T
	node    *remote.Node
	to      string // the watched system's address
	notices chan *remote.TerminatedNotice
	echoes  chan *EchoReply
}

func newWatchPeer(t *testing.T, to string) *watchPeer {
	t.Helper()
	p := &watchPeer{t: t, to: to, notices: make(chan *remote.TerminatedNotice, 4096), echoes: make(chan *EchoReply, 1)}
	cfg := testConfig(t)
	n, err := remote.NewNode(cfg, remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			switch m := env.Message.(type) {
			case *remote.TerminatedNotice:
				// The watcher the notice is for, in Who's ID's stead:
				// the tests name watchers, not watchees.
				p.notices <- &remote.TerminatedNotice{Who: env.Target, Why: m.Why}
			case *EchoReply:
				p.echoes <- m
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, n.Start(context.Background()))
	t.Cleanup(func() { _ = n.Close(ctxWait(t)) })
	p.node = n
	return p
}

func (p *watchPeer) ref(id string) remote.PIDRef {
	return remote.PIDRef{Address: p.node.Address(), ID: id}
}

func (p *watchPeer) send(target string, m any) {
	p.t.Helper()
	to := remote.PIDRef{Address: p.to, ID: target}
	require.NoError(p.t, p.node.Send(p.to, remote.Envelope{Target: to, Message: m}))
}

func (p *watchPeer) watch(watcher, watchee string) {
	p.t.Helper()
	p.send(watchee, &remote.WatchRequest{Watcher: p.ref(watcher), Watchee: remote.PIDRef{Address: p.to, ID: watchee}})
}

func (p *watchPeer) unwatch(watcher, watchee string) {
	p.t.Helper()
	p.send(watchee, &remote.UnwatchRequest{Watcher: p.ref(watcher), Watchee: remote.PIDRef{Address: p.to, ID: watchee}})
}

// sync returns once echo (an echo actor there) has answered a message sent
// after everything sent before: the watched node has handled those.
func (p *watchPeer) sync(echo string) {
	p.t.Helper()
	to := remote.PIDRef{Address: p.to, ID: echo}
	require.NoError(p.t, p.node.Send(p.to, remote.Envelope{Target: to, Sender: p.ref("sync"), Message: &Echo{Text: "sync"}}))
	select {
	case <-p.echoes:
	case <-ctxWait(p.t).Done():
		p.t.Fatal("timed out waiting for the echo")
	}
}

// expectNotices waits for one notice of reason why for each watcher.
func (p *watchPeer) expectNotices(why uint8, watchers ...string) {
	p.t.Helper()
	want := map[string]bool{}
	for _, w := range watchers {
		want[w] = true
	}
	for len(want) > 0 {
		select {
		case n := <-p.notices:
			require.Equal(p.t, why, n.Why, "the notice for %s", n.Who.ID)
			require.True(p.t, want[n.Who.ID], "an unexpected notice for %s (reason %d)", n.Who.ID, n.Why)
			delete(want, n.Who.ID)
		case <-ctxWait(p.t).Done():
			p.t.Fatalf("timed out waiting for notices (reason %d) for %d watchers", why, len(want))
		}
	}
}

func ids(prefix string, from, to int) []string {
	var s []string
	for i := from; i < to; i++ {
		s = append(s, fmt.Sprintf("%s%d", prefix, i))
	}
	return s
}

// TestWatchesPerPeerBounded: a peer that sends WatchRequests for ever new
// watchers at its own address makes the node hold at most
// Config.MaxWatchesPerPeer of them; each one beyond is answered with a
// TerminatedNotice of reason TerminatedWatchRefused, so the watcher's
// side learns that the watch did not take. Before, every request made an
// entry in the watch table and a watcher in the actor (1e6 requests from
// one connection: 1e6 entries, +357 MiB of heap, no limit).
func TestWatchesPerPeerBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxWatchesPerPeer = 16
	sys, r := startSystem(t, "b", cfg)
	x := echoOn(t, sys, "x", "b")
	peer := newWatchPeer(t, r.Address())

	const n = 1000
	for _, w := range ids("w", 0, n) {
		peer.watch(w, "x")
	}
	peer.sync("x")
	_, in := r.WatchCounts()
	assert.Equal(t, 16, in, "remote watch entries held for the peer")
	assert.Equal(t, uint64(n-16), r.Node().Stats().WatchesRefused)
	peer.expectNotices(remote.TerminatedWatchRefused, ids("w", 16, n)...)

	// The watches taken work: each of them hears of the stop.
	require.NoError(t, sys.Root().StopFuture(x).Wait())
	peer.expectNotices(remote.TerminatedStopped, ids("w", 0, 16)...)
	_, in = r.WatchCounts()
	assert.Zero(t, in)
}

// TestWatchesPerPeerCountedExactly: every way a watch ends frees its
// place (Unwatch, the watchee's Terminated, the peer's departure), and a
// repeated WatchRequest for a watch held takes none: a peer that watches,
// unwatches and watches again never meets the bound falsely, and one at
// the bound is refused exactly once per watch beyond it.
func TestWatchesPerPeerCountedExactly(t *testing.T) {
	const bound = 4
	cfg := testConfig(t)
	cfg.MaxWatchesPerPeer = bound
	sys, r := startSystem(t, "b", cfg)
	x0 := echoOn(t, sys, "x0", "b")
	echoOn(t, sys, "x1", "b")
	peer := newWatchPeer(t, r.Address())
	refused := func() uint64 { return r.Node().Stats().WatchesRefused }
	held := func() int { _, in := r.WatchCounts(); return in }

	// Full, then one beyond.
	for _, w := range ids("a", 0, bound+1) {
		peer.watch(w, "x0")
	}
	peer.sync("x0")
	peer.expectNotices(remote.TerminatedWatchRefused, "a4")
	require.Equal(t, uint64(1), refused())
	require.Equal(t, bound, held())

	// Unwatch frees the places: as many new watches are taken, and a
	// repeated request for one held is no new watch.
	for _, w := range ids("a", 0, bound) {
		peer.unwatch(w, "x0")
	}
	for _, w := range ids("b", 0, bound) {
		peer.watch(w, "x0")
	}
	peer.watch("b0", "x0")
	peer.sync("x0")
	require.Equal(t, uint64(1), refused(), "a watch refused after its place was freed by Unwatch")
	require.Equal(t, bound, held())
	peer.watch("b9", "x1")
	peer.sync("x1")
	peer.expectNotices(remote.TerminatedWatchRefused, "b9")
	require.Equal(t, uint64(2), refused())

	// The watchee's Terminated frees them.
	require.NoError(t, sys.Root().StopFuture(x0).Wait())
	peer.expectNotices(remote.TerminatedStopped, ids("b", 0, bound)...)
	require.Equal(t, 0, held())
	for _, w := range ids("c", 0, bound) {
		peer.watch(w, "x1")
	}
	peer.sync("x1")
	require.Equal(t, uint64(2), refused(), "a watch refused after its place was freed by Terminated")
	require.Equal(t, bound, held())

	// The peer's departure frees them.
	require.NoError(t, peer.node.Close(ctxWait(t)))
	testkit.Eventually(t, func() bool { return held() == 0 }, wait, "the departed peer's watches freed")
}

// TestWatchRefusalReachesWatcher: between two systems, a watch that the
// watchee's node refuses at its bound reaches the watching actor as
// Terminated{AddressTerminated} (it would otherwise wait for ever for a
// Terminated the watchee's node never sends), the watcher's node forgets
// the watch, both sides count it, and the watcher can watch again once a
// place is free. The bound is per peer address: another node's watches
// are taken meanwhile.
func TestWatchRefusalReachesWatcher(t *testing.T) {
	cfgB := testConfig(t)
	cfgB.MaxWatchesPerPeer = 2
	sysA, ra := startSystem(t, "a", testConfig(t))
	sysB, rb := startSystem(t, "b", cfgB)
	sysC, rc := startSystem(t, "c", testConfig(t))
	var ys []*actor.PID
	for i := range 3 {
		ys = append(ys, remotePID(echoOn(t, sysB, fmt.Sprintf("y%d", i), "b")))
	}
	probes := []*testkit.Probe{testkit.NewProbe(t, sysA), testkit.NewProbe(t, sysA), testkit.NewProbe(t, sysA)}
	for i, p := range probes {
		p.Watch(ys[i]) // one connection, in this order: the third is beyond the bound
	}
	term := probes[2].ExpectTerminated(ys[2], wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)
	assert.Equal(t, uint64(1), rb.Node().Stats().WatchesRefused)
	assert.Equal(t, uint64(1), ra.Node().Stats().WatchesRefusedByPeers)
	out, _ := ra.WatchCounts()
	assert.Equal(t, 2, out, "the watcher's node forgot the refused watch")

	// Another node's watches are not A's: C takes two places of its own
	// (with PIDs of its own: a PID caches the process it resolved to).
	yc := []*actor.PID{remotePID(ys[0]), remotePID(ys[1])}
	pc := []*testkit.Probe{testkit.NewProbe(t, sysC), testkit.NewProbe(t, sysC)}
	for i, p := range pc {
		p.Watch(yc[i])
	}
	watchInPlace(t, sysC, yc[0])
	assert.Equal(t, uint64(0), rc.Node().Stats().WatchesRefusedByPeers)
	_, in := rb.WatchCounts()
	assert.Equal(t, 4, in, "two watches from A, two from C")

	// A place freed (y0 stops: both nodes' watchers hear of it), A's
	// watcher of y2 gets in.
	require.NoError(t, sysB.Root().StopFuture(actor.NewPID(rb.Address(), "y0")).Wait())
	assert.Equal(t, actor.TerminatedStopped, probes[0].ExpectTerminated(ys[0], wait).Why)
	assert.Equal(t, actor.TerminatedStopped, pc[0].ExpectTerminated(yc[0], wait).Why)
	probes[2].Watch(ys[2])
	watchInPlace(t, sysA, ys[1])
	assert.Equal(t, uint64(1), rb.Node().Stats().WatchesRefused)
	for _, i := range []int{1, 2} {
		require.NoError(t, sysB.Root().StopFuture(actor.NewPID(rb.Address(), fmt.Sprintf("y%d", i))).Wait())
		assert.Equal(t, actor.TerminatedStopped, probes[i].ExpectTerminated(ys[i], wait).Why)
	}
	assert.Equal(t, actor.TerminatedStopped, pc[1].ExpectTerminated(yc[1], wait).Why)
	testkit.Eventually(t, func() bool {
		outA, _ := ra.WatchCounts()
		outC, _ := rc.WatchCounts()
		_, in := rb.WatchCounts()
		return outA == 0 && outC == 0 && in == 0
	}, wait, "watch bookkeeping cleared")
}

// TestWatchRequestNamingALocalWatcherRefused: a peer's WatchRequest whose
// watcher names a process of the receiving node is refused, as one for a
// third node's watcher is: the runtime's Watch always names a watcher on
// the sender's node. Taken, such a request put a watcher in the actor that
// no bound counted (200 000 requests naming made-up local watchers: no
// table entry, +25 MiB, until each watchee stopped), and it let the peer
// complete a pending future of this node (future IDs are a sequence) with
// the Terminated of whatever actor it named.
func TestWatchRequestNamingALocalWatcherRefused(t *testing.T) {
	sys, r := startSystem(t, "b", testConfig(t))
	x := echoOn(t, sys, "x", "b")
	silent, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), "silent")
	require.NoError(t, err)
	f := sys.Root().RequestFuture(silent, "never answered", time.Minute)
	peer := newWatchPeer(t, r.Address())
	for _, addr := range []string{r.Address(), actor.LocalAddress} {
		watcher := remote.PIDRef{Address: addr, ID: f.PID().ID}
		peer.send("x", &remote.WatchRequest{Watcher: watcher, Watchee: remote.PIDRef{Address: r.Address(), ID: "x"}})
	}
	peer.sync("x")

	// A watcher that x lists after them: when it hears of the stop, x has
	// told every watcher before it.
	probe := testkit.NewProbe(t, sys)
	probe.Watch(x)
	require.NoError(t, sys.Root().StopFuture(x).Wait())
	probe.ExpectTerminated(x, wait)
	select {
	case <-f.Done():
		res, err := f.Result()
		t.Fatalf("the pending future was completed by a peer's watch: %v, %v", res, err)
	default:
	}
	_, in := r.WatchCounts()
	assert.Zero(t, in)
}
