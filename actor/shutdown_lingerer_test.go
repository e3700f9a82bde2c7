package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/actor"
)

// lingerExt is an extension whose goroutine returns only once release
// closes; its Shutdown waits for it within ctx only and is an
// extension.Lingerer, so the system learns when the goroutine has
// returned.
type lingerExt struct {
	release, done chan struct{}
}

func (*lingerExt) Name() string       { return "linger" }
func (*lingerExt) Requires() []string { return nil }
func (*lingerExt) Enabled() bool      { return true }
func (*lingerExt) Validate() error    { return nil }

func (e *lingerExt) Install(context.Context, actor.Host) (actor.Extension, error) {
	go func() {
		defer close(e.done)
		<-e.release
	}()
	return e, nil
}

func (e *lingerExt) Shutdown(ctx context.Context) error {
	select {
	case <-e.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *lingerExt) Terminated() <-chan struct{} { return e.done }

// TestTerminatedWaitsForLingeringExtension: an extension whose goroutine
// outlives its Shutdown (which returned ctx's error) keeps Terminated
// open until that goroutine returns, when it says so as an
// extension.Lingerer; a later Shutdown names it while it runs. Before,
// the system had no way to learn of such goroutines.
func TestTerminatedWaitsForLingeringExtension(t *testing.T) {
	ext := &lingerExt{release: make(chan struct{}), done: make(chan struct{})}
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, Extensions: []actor.ExtensionInstaller{ext}})
	require.NoError(t, err)

	err = sys.Shutdown(endedContext())
	require.ErrorIs(t, err, context.Canceled)
	assert.False(t, closed(sys.Terminated()), "terminated while the extension's goroutine runs")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	err = sys.Shutdown(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Contains(t, err.Error(), `shutdown "linger": extension: shutdown failed: goroutines still running: context deadline exceeded`)
	assert.NotContains(t, err.Error(), "actor: stopping", "the actors and pools have ended")
	select {
	case <-sys.Terminated():
		t.Fatal("terminated while the extension's goroutine runs")
	case <-ctx.Done():
	}

	close(ext.release)
	awaitTerminated(t, sys)
	require.NoError(t, sys.Shutdown(context.Background()))
	goleak.VerifyNone(t)
}
