package actor_test

import (
	"runtime"
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
