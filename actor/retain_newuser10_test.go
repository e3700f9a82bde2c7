package actor_test

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
	"weak"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A watcher that took several Terminated in one run of its system queue
// kept them reachable from its cell for good: the queue's inline segment,
// which lives in the cell, kept its consumed values and its link to the
// segments that followed, with every value in them. So the watcher kept
// the stopped actors those Terminated named (their cells, props and what
// their own cells kept) for as long as it lived or anyone held its PID; the
// soak trial (testkit/soak) saw the live heap grow by half a megabyte per
// round of churn that way.
func TestNewuser10WatcherDoesNotKeepStoppedWatchees(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()

	const n = 40 // past the inline segment and the next ones
	var gone [n]weak.Pointer[actor.Props]
	var watchees [n]*actor.PID
	for i := range watchees {
		p := actor.PropsFromFunc(func(actor.Context) {})
		gone[i] = weak.Make(p)
		watchees[i] = root.Spawn(p)
	}
	blocked, release := make(chan struct{}), make(chan struct{})
	terms := make(chan struct{}, n)
	watcher := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case []*actor.PID:
			for _, p := range c.Message().([]*actor.PID) {
				c.Watch(p)
			}
			c.Respond(true)
		case string:
			close(blocked)
			<-release
		case *actor.Terminated:
			terms <- struct{}{}
		}
	}))
	_, err = root.RequestFuture(watcher, watchees[:], 5*time.Second).Result()
	require.NoError(t, err)
	// The watcher is busy while every watchee stops: their Terminated
	// queue up behind its inline segment and are taken in one run.
	root.Send(watcher, "block")
	<-blocked
	for _, p := range watchees {
		require.NoError(t, root.StopFuture(p).Wait())
	}
	close(release)
	for range n {
		<-terms
	}
	watchees = [n]*actor.PID{}
	// The watcher lives on (its PID is held); the stopped watchees must not.
	require.Eventually(t, func() bool {
		runtime.GC()
		for _, w := range gone {
			if w.Value() != nil {
				return false
			}
		}
		return true
	}, 5*time.Second, time.Millisecond, "a stopped watchee is still reachable")
	runtime.KeepAlive(watcher)
}

// liveHeap is the live heap after two GCs.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A stopped actor keeps no mailbox ring. Its PID keeps its cell (a PID
// caches the cell it reached), and PIDs are held long after their actor
// stopped: by callers, by caches of bounded count (the cluster's PidCache,
// the remote extension's target cache). The ring an actor's backlog grew
// stayed with the cell: 512 KiB for an actor that once had 16,384 messages
// queued, kept by each such PID, so a bound in entries was none in bytes.
func TestNewuser10StoppedActorGivesItsRingBack(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()

	const backlog = 20000
	gate, done := make(chan struct{}), make(chan struct{})
	n := 0
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case string:
			<-gate
		case int:
			if n++; n == backlog {
				close(done)
			}
		}
	}))
	root.Send(pid, "block")
	for i := range backlog {
		root.Send(pid, i)
	}
	close(gate)
	<-done
	require.NoError(t, root.StopFuture(pid).Wait())

	held := liveHeap() // the stopped actor's PID is still held here
	runtime.KeepAlive(pid)
	pid = nil
	dropped := liveHeap()
	kept := int64(held) - int64(dropped)
	t.Logf("a stopped actor's PID keeps %d bytes", kept)
	require.Less(t, kept, int64(64<<10), "a stopped actor keeps its mailbox ring (%d bytes kept by its PID)", kept)
}

// A long-lived actor's memory does not grow with the system messages it
// has handled. Every segment its system queue linked after the inline one
// stayed reachable from the cell (the inline segment kept its link): 32
// bytes per system message for the actor's life, about 160 KB after 5,000
// Terminated of actors it watched one at a time.
func TestNewuser10LongLivedWatcherDoesNotGrow(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()

	terms := make(chan struct{}, 1)
	watcher := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.PID:
			c.Watch(m)
			c.Respond(true)
		case *actor.Terminated:
			terms <- struct{}{}
		}
	}))
	watchee := actor.PropsFromFunc(func(actor.Context) {})
	cycle := func(n int) {
		for range n {
			p := root.Spawn(watchee)
			_, err := root.RequestFuture(watcher, p, 5*time.Second).Result()
			require.NoError(t, err)
			root.Stop(p)
			<-terms
		}
	}
	cycle(100) // past the inline segment
	before := liveHeap()
	cycle(5000)
	grown := int64(liveHeap()) - int64(before)
	t.Logf("the heap grew by %d bytes over 5,000 watches", grown)
	require.Less(t, grown, int64(64<<10), "a long-lived watcher grows with its system messages (%d bytes)", grown)
	runtime.KeepAlive(watcher)
}
