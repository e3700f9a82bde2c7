package extension_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/extension"
)

// lingerInstaller installs a lingerExt: an extension with one goroutine
// that returns only once release closes, and whose Shutdown waits for it
// within ctx only, as an extension whose goroutine is stuck in a call
// would.
type lingerInstaller struct {
	name       string
	release    chan struct{}
	installErr error
	// terminated overrides the Lingerer's answer: "nil" returns a nil
	// channel, "panic" panics.
	terminated string
}

func (l *lingerInstaller) Name() string       { return l.name }
func (l *lingerInstaller) Requires() []string { return nil }
func (l *lingerInstaller) Enabled() bool      { return true }
func (l *lingerInstaller) Validate() error    { return nil }

func (l *lingerInstaller) Install(context.Context, *host) (extension.Extension, error) {
	if l.installErr != nil {
		return nil, l.installErr
	}
	e := &lingerExt{done: make(chan struct{}), terminated: l.terminated}
	go func() {
		defer close(e.done)
		<-l.release
	}()
	return e, nil
}

type lingerExt struct {
	done       chan struct{}
	terminated string
}

func (e *lingerExt) Shutdown(ctx context.Context) error {
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *lingerExt) Terminated() <-chan struct{} {
	switch e.terminated {
	case "nil":
		return nil
	case "panic":
		panic("terminated exploded")
	}
	return e.done
}

// TestAwaitTerminatedWaitsForLingerers: an extension whose Shutdown
// returned with ctx's error while its goroutine still ran is reported by
// AwaitTerminated, as long as the goroutine runs, with an *Error naming it
// that wraps ErrShutdown and the wait's ctx error (bounded by that ctx);
// extensions that are not Lingerers are not waited for. Once the goroutine
// returns, AwaitTerminated returns nil, for every caller at once (-race).
func TestAwaitTerminatedWaitsForLingerers(t *testing.T) {
	release := make(chan struct{})
	h := newHost()
	require.NoError(t, h.reg.InstallAll(context.Background(), h, []extension.Installer[*host]{
		&fake{name: "plain", goroutine: true},
		&lingerInstaller{name: "linger", release: release},
	}))
	require.NoError(t, h.reg.AwaitTerminated(endedCtx()), "nothing shut down yet: nothing to wait for")

	require.ErrorIs(t, h.reg.ShutdownAll(endedCtx()), context.Canceled)

	err := h.reg.AwaitTerminated(endedCtx())
	require.ErrorIs(t, err, extension.ErrShutdown)
	require.ErrorIs(t, err, context.Canceled)
	var e *extension.Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, "linger", e.Extension)
	assert.Equal(t, extension.OpShutdown, e.Op)
	assert.Equal(t, `shutdown "linger": extension: shutdown failed: goroutines still running: context canceled`, err.Error())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, h.reg.AwaitTerminated(ctx), context.DeadlineExceeded, "the wait ends with its ctx")

	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() { errs[i] = h.reg.AwaitTerminated(context.Background()) })
	}
	close(release)
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.NoError(t, h.reg.AwaitTerminated(endedCtx()), "a closed channel wins over an ended ctx")
}

// TestAwaitTerminatedNilOrPanickingTerminated: a Lingerer whose Terminated
// returns nil, or panics, counts as having nothing left running: the
// panic does not reach ShutdownAll's caller, and nothing waits for good.
func TestAwaitTerminatedNilOrPanickingTerminated(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	h := newHost()
	require.NoError(t, h.reg.InstallAll(context.Background(), h, []extension.Installer[*host]{
		&lingerInstaller{name: "nil", release: release, terminated: "nil"},
		&lingerInstaller{name: "panic", release: release, terminated: "panic"},
	}))
	require.ErrorIs(t, h.reg.ShutdownAll(endedCtx()), context.Canceled)
	require.NoError(t, h.reg.AwaitTerminated(context.Background()))
}

// TestAwaitTerminatedAfterRollback: the extensions shut down by the
// rollback of a failed InstallAll are waited for too.
func TestAwaitTerminatedAfterRollback(t *testing.T) {
	release := make(chan struct{})
	h := newHost()
	boom := errors.New("boom")
	ctx, cancel := context.WithCancel(context.Background())
	err := h.reg.InstallAll(ctx, h, []extension.Installer[*host]{
		&lingerInstaller{name: "linger", release: release},
		&fake{name: "failing", onInstall: func(context.Context, *host) error {
			cancel() // the rollback's Shutdown gets an ended ctx
			return boom
		}},
	})
	require.ErrorIs(t, err, boom)
	require.ErrorIs(t, h.reg.AwaitTerminated(endedCtx()), context.Canceled, "the rolled-back extension's goroutine still runs")
	close(release)
	require.NoError(t, h.reg.AwaitTerminated(context.Background()))
}

func endedCtx() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
