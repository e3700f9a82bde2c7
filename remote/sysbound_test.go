package remote_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/watchhook"
	"github.com/fraktor-go/fraktor/remote"
)

// stuckActor is a local actor that blocks in its Receive on "block" until
// released, as an actor stuck in user code does; it counts its Stopped and
// passes on the Terminated it gets.
type stuckActor struct {
	pid     *actor.PID
	release func()
	stopped atomic.Int32
	terms   chan *actor.Terminated
}

// spawnStuck spawns a stuck actor named name on sys and blocks it; onStart
// runs in its Started (a Watch). Its mailbox's consumer side may be read
// once spawnStuck returns, until release.
func spawnStuck(t *testing.T, sys *actor.System, name string, onStart func(actor.Context)) *stuckActor {
	t.Helper()
	s := &stuckActor{terms: make(chan *actor.Terminated, 16)}
	entered := make(chan struct{})
	rel := make(chan struct{})
	var once sync.Once
	s.release = func() { once.Do(func() { close(rel) }) }
	t.Cleanup(s.release)
	pid, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			if onStart != nil {
				onStart(c)
			}
		case string:
			close(entered)
			<-rel
		case int:
			c.Respond(m)
		case *blockAgain:
			close(m.entered)
			<-m.release
		case *actor.Terminated:
			s.terms <- m
		case *actor.Stopped:
			s.stopped.Add(1)
		}
	}), name)
	require.NoError(t, err)
	s.pid = pid
	sys.Root().Send(pid, "block")
	<-entered
	return s
}

// queued is the number of system messages waiting in the stuck actor.
func (s *stuckActor) queued() int { return watchhook.SystemLen(s.pid) }

// A peer's StopRequests to an actor stuck in its Receive queue one system
// message, however many it sends: the first Stop marks the mailbox, the
// others find the mark. Before, each queued one (1,000 here; 1,000,000
// held +97 MiB, docs/remote.md). The actor still stops, once.
func TestRepeatedStopFromPeerQueuesOne(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	s := spawnStuck(t, sys, "stuck", nil)
	p := newWatchPeer(t, r.Address())

	for range 1000 {
		p.send("stuck", &remote.StopRequest{})
	}
	p.sync("echo")
	require.Equal(t, 1, s.queued(), "system messages queued by 1000 StopRequests")
	s.release()
	require.NoError(t, sys.Root().StopFuture(s.pid).Wait())
	require.EqualValues(t, 1, s.stopped.Load())
}

// A peer's TerminatedNotices reach a watcher only for a watch it holds,
// once: the first takes the watch table's entry, a repeat and one about a
// process the watcher never watched queue nothing. Before, each notice
// queued a system message in the watcher (which ignored all but the
// first), as many as the peer sent while it was stuck.
func TestTerminatedNoticeQueuesOnlyForAWatchHeld(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	p := newWatchPeer(t, r.Address())
	x := actor.NewPID(p.node.Address(), "x")
	s := spawnStuck(t, sys, "watcher", func(c actor.Context) { c.Watch(x) })

	for range 1000 {
		p.send("watcher", &remote.TerminatedNotice{Who: p.ref("x"), Why: remote.TerminatedStopped})
		p.send("watcher", &remote.TerminatedNotice{Who: p.ref("y"), Why: remote.TerminatedStopped})
	}
	p.sync("echo")
	require.Equal(t, 1, s.queued(), "system messages queued by 2000 notices for one watch held")
	out, _ := r.WatchCounts()
	require.Zero(t, out)
	s.release()
	term := <-s.terms
	require.Equal(t, "x", term.Who.ID)
	require.Equal(t, actor.TerminatedStopped, term.Why)
	require.NoError(t, sys.Root().StopFuture(s.pid).Wait())
	require.Empty(t, s.terms, "a second Terminated")
}

// A peer that alternates WatchRequest and UnwatchRequest for one watcher
// of an actor stuck in its Receive queues one system message for the pair
// (an update of the watch, which reads the latest request when the actor
// handles it), however many it sends; the outcome is that of every
// request applied in order: a pair that ends watched gets exactly one
// Terminated when the actor stops, one that ends unwatched none. Before,
// each request that changed the state queued a Watch or an Unwatch: 2 per
// pair, 4,001 here.
func TestAlternatingWatchUnwatchQueuesOne(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	s := spawnStuck(t, sys, "stuck", nil)
	p := newWatchPeer(t, r.Address())

	for range 1000 {
		p.watch("w", "stuck")
		p.unwatch("w", "stuck")
		p.watch("v", "stuck")
		p.unwatch("v", "stuck")
	}
	p.watch("w", "stuck") // w ends watched, v unwatched
	p.sync("echo")
	require.Equal(t, 2, s.queued(), "system messages queued by 4001 requests for two pairs")
	_, in := r.WatchCounts()
	require.Equal(t, 1, in)

	s.release()
	require.NoError(t, sys.Root().StopFuture(s.pid).Wait())
	p.sync("echo") // the notices, written before the echo's reply, have arrived
	require.Len(t, p.notices, 1)
	n := <-p.notices
	require.Equal(t, "w", n.Who.ID)
	require.Equal(t, remote.TerminatedStopped, n.Why)
	_, in = r.WatchCounts()
	require.Zero(t, in)
}

// The same alternation, the actor running: the watch held at the end is
// the last request's, whatever the interleaving with the actor's turns.
func TestAlternatingWatchUnwatchEndsAsTheLastRequest(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	x := echoOn(t, sys, "x", "a")
	p := newWatchPeer(t, r.Address())
	for range 500 {
		p.watch("w", "x")
		p.unwatch("w", "x")
		p.watch("v", "x")
		p.unwatch("v", "x")
	}
	p.watch("w", "x")
	p.sync("echo")
	require.NoError(t, sys.Root().StopFuture(x).Wait())
	p.sync("echo")
	require.Len(t, p.notices, 1)
	n := <-p.notices
	require.Equal(t, "w", n.Who.ID)
}

// Watches and unwatches for ever new watchers leave, while the actor is
// stuck, an update per watcher whose watch ended (each holds the actor's
// queued message until it runs): a peer address's entries, held and
// ended, are bounded by twice Config.MaxWatchesPerPeer (so that ending
// every watch and making as many new ones never meets the bound falsely,
// TestWatchesPerPeerCountedExactly). A new watch beyond is refused, and
// answered as at the bound of watches held; once the actor has taken its
// updates, watches are taken again. Before, each request queued a system
// message: 2,000 here.
func TestFreshWatchersWatchUnwatchBounded(t *testing.T) {
	const bound = 16
	cfg := testConfig(t)
	cfg.MaxWatchesPerPeer = bound
	sys, r := startSystem(t, "a", cfg)
	echoOn(t, sys, "echo", "a")
	s := spawnStuck(t, sys, "stuck", nil)
	p := newWatchPeer(t, r.Address())

	const n = 1000
	for _, w := range ids("w", 0, n) {
		p.watch(w, "stuck")
		p.unwatch(w, "stuck")
	}
	p.sync("echo")
	require.Equal(t, 2*bound, s.queued(), "system messages queued by %d watchers' Watch and Unwatch", n)
	require.Equal(t, uint64(n-2*bound), r.Node().Stats().WatchesRefused)
	p.expectNotices(remote.TerminatedWatchRefused, ids("w", 2*bound, n)...)

	s.release()
	_, err := actor.Request[int](ctxWait(t), sys.Root(), s.pid, 1) // after its system messages
	require.NoError(t, err)
	p.watch("z", "stuck")
	p.sync("echo")
	_, in := r.WatchCounts()
	require.Equal(t, 1, in, "a watch after the actor took its updates")
	require.NoError(t, sys.Root().StopFuture(s.pid).Wait())
	p.expectNotices(remote.TerminatedStopped, "z")
}

// A watch held, then unwatched and watched again while the actor is stuck
// with a Stop queued ahead: the stop drains the update (which reads
// "watched") and then tells its watchers, and the peer gets one
// Terminated, not one from each. Before, the drained Watch and the
// watcher list each sent one.
func TestWatchUpdateDrainedAtStopTellsOnce(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	p := newWatchPeer(t, r.Address())
	s := spawnStuck(t, sys, "stuck", nil)
	s.release()
	p.watch("w", "stuck")
	p.sync("echo")
	_, err := actor.Request[int](ctxWait(t), sys.Root(), s.pid, 1) // the watch is applied
	require.NoError(t, err)

	// Blocked again, behind the Stop.
	entered := make(chan struct{})
	rel := make(chan struct{})
	sys.Root().Send(s.pid, &blockAgain{entered: entered, release: rel})
	<-entered
	p.send("stuck", &remote.StopRequest{})
	p.unwatch("w", "stuck")
	p.watch("w", "stuck")
	p.sync("echo")
	require.Equal(t, 2, s.queued(), "the Stop and one update")
	close(rel)
	require.NoError(t, sys.Root().StopFuture(s.pid).Wait())
	p.sync("echo")
	require.Len(t, p.notices, 1)
	require.Equal(t, "w", (<-p.notices).Who.ID)
}

// blockAgain blocks a stuck actor once more.
type blockAgain struct {
	entered chan struct{}
	release chan struct{}
}

// An UnwatchRequest is taken only from the watcher's own node, as a
// WatchRequest is: a peer that names another node's watcher cannot end
// that node's watch. Before, it did, and the watcher never heard of the
// watchee's stop.
func TestUnwatchRequestForAnotherNodesWatcherRefused(t *testing.T) {
	sys, r := startSystem(t, "a", testConfig(t))
	echoOn(t, sys, "echo", "a")
	x := echoOn(t, sys, "x", "a")
	b := newWatchPeer(t, r.Address())
	c := newWatchPeer(t, r.Address())
	b.watch("w", "x")
	b.sync("echo")
	c.send("x", &remote.UnwatchRequest{Watcher: b.ref("w"), Watchee: remote.PIDRef{Address: r.Address(), ID: "x"}})
	c.sync("echo")
	_, in := r.WatchCounts()
	require.Equal(t, 1, in, "another node's watch ended by a peer")
	require.NoError(t, sys.Root().StopFuture(x).Wait())
	b.expectNotices(remote.TerminatedStopped, "w")
}
