package actor

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// blockedStopExt is a test extension with one system actor whose Stopped
// blocks until release closes; it records the context its Shutdown got.
type blockedStopExt struct {
	stopped, release chan struct{}
	shutCtx          chan context.Context
}

func (blockedStopExt) Name() string       { return "blocked-stop" }
func (blockedStopExt) Requires() []string { return nil }
func (blockedStopExt) Enabled() bool      { return true }
func (blockedStopExt) Validate() error    { return nil }

func (e blockedStopExt) Install(_ context.Context, h Host) (Extension, error) {
	_, err := h.SpawnSystem(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(*Stopped); ok {
			<-e.release
			close(e.stopped)
		}
	}), "blocked-stop")
	return e, err
}

func (e blockedStopExt) Shutdown(ctx context.Context) error {
	e.shutCtx <- ctx
	return nil
}

// TestShutdownUnfinishedUserActorsStillStopsSystemActors: when the wait
// for the user actors ends with ctx (a user actor's Stopped blocks),
// Shutdown still tells the system guardian's tree to stop, without waiting
// past ctx; the extensions' Shutdown still runs; the error names exactly
// the parts not finished; and once the blocked hooks return, every actor,
// system ones included, stops and every goroutine ends. Before, the root
// guardian was never told to stop: the system actors ran on, and the error
// did not name them.
func TestShutdownUnfinishedUserActorsStillStopsSystemActors(t *testing.T) {
	for _, tc := range []struct {
		name string
		// shutdown calls sys.Shutdown with a ctx that has ended, or ends
		// while the user actor's Stopped blocks; it returns the ctx and
		// Shutdown's error.
		shutdown func(sys *System, userInside <-chan struct{}) (context.Context, error)
	}{
		{"ended_before", func(sys *System, _ <-chan struct{}) (context.Context, error) {
			ctx := endedCtx()
			return ctx, sys.Shutdown(ctx)
		}},
		{"cancelled_while_waiting", func(sys *System, userInside <-chan struct{}) (context.Context, error) {
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- sys.Shutdown(ctx) }()
			<-userInside
			cancel()
			return ctx, <-errc
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ext := blockedStopExt{stopped: make(chan struct{}), release: make(chan struct{}), shutCtx: make(chan context.Context, 1)}
			sys, err := NewSystem(SystemConfig{Workers: 2, Extensions: []ExtensionInstaller{ext}})
			require.NoError(t, err)
			userInside, userRelease, userStopped := make(chan struct{}), make(chan struct{}), make(chan struct{})
			sys.Root().Spawn(PropsFromFunc(func(c Context) {
				if _, ok := c.Message().(*Stopped); ok {
					close(userInside)
					<-userRelease
					close(userStopped)
				}
			}))

			ctx, err := tc.shutdown(sys, userInside)
			require.ErrorIs(t, err, context.Canceled)
			assert.Equal(t, "actor: stopping user actors: context canceled\n"+
				"actor: stopping system actors: context canceled\n"+
				"actor: stopping the worker pool: context canceled", err.Error(),
				"exactly the user actors, the system actors and the pool running them are unfinished")
			select {
			case got := <-ext.shutCtx:
				assert.Equal(t, ctx, got, "the extension's Shutdown ran, with Shutdown's ctx")
			default:
				t.Fatal("the extension's Shutdown did not run")
			}

			close(userRelease)
			close(ext.release)
			for _, ch := range []chan struct{}{userStopped, ext.stopped, sys.guardiansDone} {
				select {
				case <-ch:
				case <-time.After(10 * time.Second):
					t.Fatal("an actor never stopped after its blocked hook returned")
				}
			}
			goleak.VerifyNone(t)
		})
	}
}

// TestShutdownLaterCallEndedCtx: a later Shutdown, once the first has
// returned, returns the first's result even with a context that has
// already ended. Before, it returned the context's error half of the time
// (a select between the two).
func TestShutdownLaterCallEndedCtx(t *testing.T) {
	sys, err := NewSystem(SystemConfig{Workers: 1})
	require.NoError(t, err)
	require.NoError(t, sys.Shutdown(context.Background()))
	for range 64 { // a coin flip each before
		require.NoError(t, sys.Shutdown(endedCtx()))
	}
}
