package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A request with a timeout that is still waiting when the system shuts
// down fails with ErrSystemStopped then: no answer can come any more, and
// its timeout will never fire (Shutdown closes the timer queue). Before,
// the timeout was dropped with the queue and the waiter blocked for good,
// its timeout notwithstanding.
func TestPendingRequestFailsAtShutdown(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	got := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			close(got) // handled, never answered
		}
	}))
	f := sys.Root().RequestFuture(pid, "never answered", time.Hour)
	f.Done() // the request goes to the pool (not run on this goroutine)
	<-got
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, sys.Shutdown(ctx))
	_, err = f.ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrSystemStopped)
}
