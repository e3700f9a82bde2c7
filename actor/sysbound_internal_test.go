package actor

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// blockedActor spawns an actor that blocks in its Receive on "block" until
// release is closed; entered is closed once it is blocked (a happens-before
// edge to the caller, which may then read its mailbox's consumer side).
func blockedActor(t *testing.T, sys *System, stopped chan<- struct{}) (pid *PID, c *cell, release func()) {
	t.Helper()
	entered := make(chan struct{})
	rel := make(chan struct{})
	pid = sys.Root().Spawn(PropsFromFunc(func(ctx Context) {
		switch ctx.Message().(type) {
		case string:
			close(entered)
			<-rel
		case int: // the watchers it holds
			n := 0
			if x := ctx.(*cell).x; x != nil {
				n = len(x.watchers.list)
			}
			ctx.Respond(n)
		case *Stopped:
			if stopped != nil {
				stopped <- struct{}{}
			}
		}
	}))
	sys.Root().Send(pid, "block")
	<-entered
	var once sync.Once
	return pid, pid.local.Load(), func() { once.Do(func() { close(rel) }) }
}

func newBoundTestSystem(t *testing.T) (*System, context.Context) {
	t.Helper()
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(func() {
		require.NoError(t, sys.Shutdown(ctx))
		cancel()
	})
	return sys, ctx
}

// Any number of Stops to an actor stuck in its Receive queue one system
// message: the first marks the mailbox (mailbox.MarkStop), the others find
// the mark. Before, each queued one (a peer's StopRequests: one message
// per request, for as long as the actor was stuck). The actor still stops,
// once, when it runs again; and a Stop to an actor that is stopping (a
// PoisonPill began it) queues nothing either.
func TestRepeatedStopQueuesOne(t *testing.T) {
	sys, ctx := newBoundTestSystem(t)
	stopped := make(chan struct{}, 4)
	pid, c, release := blockedActor(t, sys, stopped)
	defer release()

	f := sys.Root().StopFuture(pid) // its own message: it names a waiter
	for range 1000 {
		sys.Root().Stop(pid)
		c.StopProcess(pid)
		c.SendSystem(pid, &Stop{})
	}
	require.Equal(t, 2, c.mb.SystemLen(), "the StopFuture's message and one Stop")
	release()
	require.NoError(t, f.Wait())
	<-stopped
	select {
	case <-stopped:
		t.Fatal("Stopped twice")
	default:
	}

	// A PoisonPill begins the stop: Stops after it queue nothing. The
	// actor waits in its Stopping for the probe, so the mailbox is still
	// open when the Stops arrive.
	inStopping := make(chan struct{})
	leave := make(chan struct{})
	pid2 := sys.Root().Spawn(PropsFromFunc(func(ctx Context) {
		if _, ok := ctx.Message().(*Stopping); ok {
			close(inStopping)
			<-leave
		}
	}))
	c2 := pid2.local.Load()
	sys.Root().Poison(pid2)
	<-inStopping
	for range 100 {
		sys.Root().Stop(pid2)
	}
	n := c2.mb.SystemLen()
	close(leave)
	require.Zero(t, n, "a Stop to a stopping actor queues nothing")
	_, err := sys.Root().StopFuture(pid2).ResultContext(ctx)
	require.NoError(t, err)
}

// A restart does not undo a queued Stop: the actor restarts, then stops.
func TestStopQueuedBeforeRestartStillStops(t *testing.T) {
	sys, ctx := newBoundTestSystem(t)
	entered := make(chan struct{})
	rel := make(chan struct{})
	starts := make(chan struct{}, 4)
	pid := sys.Root().Spawn(PropsFromFunc(func(ctx Context) {
		switch ctx.Message().(type) {
		case *Started:
			starts <- struct{}{}
		case string:
			close(entered)
			<-rel
			panic("fail")
		}
	}))
	<-starts
	sys.Root().Send(pid, "block")
	<-entered
	f := sys.Root().StopFuture(pid)
	sys.Root().Stop(pid)
	close(rel)
	_, err := f.ResultContext(ctx)
	require.NoError(t, err)
	require.True(t, pid.local.Load().mb.StopMarked())
}

// fakeWatchState is a watchhook.State that a test sets; takes counts the
// Take calls.
type fakeWatchState struct {
	mu    sync.Mutex
	want  bool
	takes int
}

func (s *fakeWatchState) set(v bool) {
	s.mu.Lock()
	s.want = v
	s.mu.Unlock()
}

func (s *fakeWatchState) Take() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.takes++
	return s.want
}

// A watch update adds or removes its watcher by the state it reads when
// the actor handles it, not the state when it was posted; one that reads
// "watched" at the actor's stop gets the watcher its Terminated, once.
func TestWatchUpdateAppliesLatestState(t *testing.T) {
	sys, ctx := newBoundTestSystem(t)
	watcher := sys.Root().NewFuture(0)
	s := &fakeWatchState{want: true}
	pid, c, release := blockedActor(t, sys, nil)
	postWatchUpdate(c, pid, watcher.PID(), s)
	s.set(false) // the peer unwatched before the actor ran
	require.Equal(t, 1, c.mb.SystemLen())
	release()
	held, err := Request[int](ctx, sys.Root(), pid, 0) // after the update
	require.NoError(t, err)
	require.Zero(t, held, "the update read the latest state: not watched")
	s.mu.Lock()
	require.Equal(t, 1, s.takes)
	s.mu.Unlock()
	require.NoError(t, sys.Root().StopFuture(pid).Wait())
	select {
	case <-watcher.Done():
		t.Fatal("a watch whose last state was unwatched told of the stop")
	default:
	}

	// Watched at the stop: the watcher is told.
	s2 := &fakeWatchState{want: true}
	w2 := sys.Root().NewFuture(0)
	pid2, c2, release2 := blockedActor(t, sys, nil)
	postWatchUpdate(c2, pid2, w2.PID(), s2)
	release2()
	held, err = Request[int](ctx, sys.Root(), pid2, 0)
	require.NoError(t, err)
	require.Equal(t, 1, held)
	_, err = sys.Root().StopFuture(pid2).ResultContext(ctx)
	require.NoError(t, err)
	res, err := w2.ResultContext(ctx)
	require.NoError(t, err)
	require.Equal(t, pid2.ID, res.(*Terminated).Who.ID)
	s2.mu.Lock()
	require.Equal(t, 1, s2.takes)
	s2.mu.Unlock()
}
