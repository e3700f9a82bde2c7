package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// stallSignal is a manual dispatcher that says when a RunUntilIdle found
// nothing to run (the system's shutdown drives it that way).
type stallSignal struct {
	*scheduler.Manual
	stalls chan struct{}
}

func (m *stallSignal) RunUntilIdle() int {
	n := m.Manual.RunUntilIdle()
	if n == 0 {
		select {
		case m.stalls <- struct{}{}:
		default:
		}
	}
	return n
}

// TestReview6LaterShutdownOnManualDispatcherDoesNotWaitForItself: on a
// manual dispatcher nothing runs the actors but the caller.
// System.awaitTerminated drives it once, until it stalls, then waits for
// Terminated passively: when what stalled it ends afterwards (a child on
// another dispatcher whose Stopped returns), its Terminated waits in the
// manual queue for a RunUntilIdle that nobody calls, and the later
// Shutdown waits until its ctx ends, for good with context.Background().
// Before 01c2539 a later call returned the first's error at once. Either
// a nil (it drove the stop to its end) or a prompt error is fine; waiting
// for ever on work only the caller can run is not.
func TestReview6LaterShutdownOnManualDispatcherDoesNotWaitForItself(t *testing.T) {
	man := &stallSignal{Manual: scheduler.NewManual(scheduler.ManualConfig{}), stalls: make(chan struct{}, 1)}
	sys, err := actor.NewSystem(actor.SystemConfig{Dispatcher: man})
	require.NoError(t, err)
	own := scheduler.NewCoordinator(scheduler.Config{Workers: 1})
	own.Start()
	defer func() { _ = own.Shutdown(context.Background()) }()
	release, inside := make(chan struct{}), make(chan struct{})
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Stopped); ok {
			close(inside)
			<-release
		}
	}, actor.WithDispatcher(own)))

	// The first call stalls: the child's Stopped blocks on its own pool.
	require.ErrorContains(t, sys.Shutdown(context.Background()), "stalled")
	<-inside
	select {
	case <-man.stalls:
	default:
	}

	ret := make(chan error, 1)
	go func() { ret <- sys.Shutdown(context.Background()) }()
	<-man.stalls   // the later call has driven the dispatcher as far as it goes
	close(release) // the child ends; its parent's Terminated is queued on man
	select {
	case err := <-ret:
		if err != nil {
			require.ErrorContains(t, err, "stalled")
		}
	case <-time.After(10 * time.Second):
		require.NoError(t, own.Shutdown(context.Background())) // the child's turn has ended
		man.RunUntilIdle()                                     // what the stuck call waits for
		<-ret
		t.Fatal("a later Shutdown(context.Background()) on a manual dispatcher waited for work only its caller can run")
	}
	require.NoError(t, own.Shutdown(context.Background())) // the child's turn has ended
	require.NoError(t, sys.Shutdown(context.Background()), "a call that drives the rest")
	awaitTerminated(t, sys)
}
