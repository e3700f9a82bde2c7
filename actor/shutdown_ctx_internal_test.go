package actor

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// endedCtx returns a context that has already ended.
func endedCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

// TestShutdownEndedCtxReportsOnlyUnfinished: Shutdown with a context that
// has already ended lists among its errors only the parts that had not
// finished. Before, the EventStream without a subscriber (nothing to wait
// for) was reported unfinished every time, and a part already finished
// (the user guardian, stopped before) half of the time: a select
// picks at random between its done channel and the ended context.
func TestShutdownEndedCtxReportsOnlyUnfinished(t *testing.T) {
	t.Run("nothing_to_wait_for", func(t *testing.T) {
		// The manual dispatcher runs every stop on Shutdown's goroutine.
		sys, err := NewSystem(SystemConfig{Dispatcher: scheduler.NewManual(scheduler.ManualConfig{})})
		require.NoError(t, err)
		sys.Root().Spawn(PropsFromFunc(func(Context) {}))
		assert.NoError(t, sys.Shutdown(endedCtx()))
	})
	t.Run("user_guardian_stopped_before", func(t *testing.T) {
		for range 20 { // a coin flip each before
			sys, err := NewSystem(SystemConfig{})
			require.NoError(t, err)
			sys.Root().Spawn(PropsFromFunc(func(Context) {}))
			// Stopped before Shutdown (a guardian no longer fails by an
			// escalation: see TestEscalateFromTopLevelStopsOnlyTheActor).
			sys.sendSystem(nil, sys.userGuardian.selfPID(), stopSys)
			<-sys.userDone
			err = sys.Shutdown(endedCtx())
			if err != nil {
				require.NotContains(t, err.Error(), "stopping user actors", "the user actors had stopped")
			}
		}
	})
	t.Run("blocked_subscriber_reported", func(t *testing.T) {
		sys, err := NewSystem(SystemConfig{Dispatcher: scheduler.NewManual(scheduler.ManualConfig{})})
		require.NoError(t, err)
		inside, release := make(chan struct{}), make(chan struct{})
		sys.EventStream().Subscribe(func(any) {
			close(inside)
			<-release
		})
		sys.EventStream().Publish("event")
		<-inside
		err = sys.Shutdown(endedCtx())
		close(release)
		require.ErrorIs(t, err, context.Canceled)
		assert.Equal(t, "actor: event stream subscribers: context canceled", err.Error(), "only the subscriber is unfinished")
	})
}
