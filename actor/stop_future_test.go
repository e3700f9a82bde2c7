package actor_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// stopResult waits for a StopFuture and returns its *Terminated.
func stopResult(t *testing.T, f *actor.Future) *actor.Terminated {
	t.Helper()
	v, err := f.ResultContext(t.Context())
	require.NoError(t, err)
	term, ok := v.(*actor.Terminated)
	require.True(t, ok, "StopFuture completed with %T, want *actor.Terminated", v)
	return term
}

// An actor with children finishes its stop after them: the waiter of
// StopFuture is told only then (it waits in the watcher list, not on the
// direct path of a childless actor).
func TestStopFutureWaitsForChildren(t *testing.T) {
	sys := testkit.NewSystem(t)
	var mu sync.Mutex
	var order []string
	record := func(s string) {
		mu.Lock()
		order = append(order, s)
		mu.Unlock()
	}
	spawned := make(chan struct{})
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			for range 3 {
				c.Spawn(actor.PropsFromFunc(func(c actor.Context) {
					if _, ok := c.Message().(*actor.Stopped); ok {
						record("child")
					}
				}))
			}
			close(spawned)
		case *actor.Stopped:
			record("parent")
		}
	}))
	<-spawned
	term := stopResult(t, sys.Root().StopFuture(parent))
	require.True(t, term.Who.Equal(parent))
	require.Equal(t, actor.TerminatedStopped, term.Why)
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, []string{"child", "child", "child", "parent"}, order)
}

// StopFuture on an actor that has stopped already is answered by its
// closed mailbox; on an ID that names nothing, NotFound.
func TestStopFutureAfterStopAndUnknown(t *testing.T) {
	sys := testkit.NewSystem(t)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	first := stopResult(t, sys.Root().StopFuture(pid))
	require.Equal(t, actor.TerminatedStopped, first.Why)
	again := stopResult(t, sys.Root().StopFuture(pid))
	require.True(t, again.Who.Equal(pid))
	require.Equal(t, actor.TerminatedStopped, again.Why)

	nobody := actor.NewPID(sys.Address(), "nobody")
	require.Equal(t, actor.TerminatedNotFound, stopResult(t, sys.Root().StopFuture(nobody)).Why)
}

// Several goroutines stopping one actor at once are all answered, each
// with the actor's own Terminated.
func TestStopFutureConcurrent(t *testing.T) {
	sys := testkit.NewSystem(t)
	for range 20 {
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		futures := make([]*actor.Future, 4)
		var wg sync.WaitGroup
		for i := range futures {
			wg.Go(func() { futures[i] = sys.Root().StopFuture(pid) })
		}
		wg.Wait()
		for _, f := range futures {
			term := stopResult(t, f)
			require.True(t, term.Who.Equal(pid))
			require.Equal(t, actor.TerminatedStopped, term.Why)
		}
	}
}

// A future's PID can be stopped: Stop fails the future with
// ErrFutureStopped, and StopFuture of it completes once the future has
// (at once when it had). Before, the future ignored Stop and Watch: it
// went on waiting, and StopFuture(f.PID()).Wait() never returned.
func TestStopFutureOfFuture(t *testing.T) {
	sys := testkit.NewSystem(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))

	f := sys.Root().RequestFuture(silent, "never answered", 0)
	sys.Root().Stop(f.PID())
	_, err := f.ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrFutureStopped)

	g := sys.Root().RequestFuture(silent, "never answered", 0)
	res, err := sys.Root().StopFuture(g.PID()).ResultContext(ctx)
	require.NoError(t, err)
	require.True(t, res.(*actor.Terminated).Who.Equal(g.PID()))
	_, err = g.ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrFutureStopped)

	// Watching a completed future answers at once.
	res, err = sys.Root().StopFuture(g.PID()).ResultContext(ctx)
	require.NoError(t, err)
	require.True(t, res.(*actor.Terminated).Who.Equal(g.PID()))
}
