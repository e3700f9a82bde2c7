package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// lateLingerer is an extension.Lingerer that breaks its contract: its
// Shutdown returns nil while its Terminated channel is still open (it
// closes only when done closes).
type lateLingerer struct{ done chan struct{} }

func (*lateLingerer) Name() string       { return "late" }
func (*lateLingerer) Requires() []string { return nil }
func (*lateLingerer) Enabled() bool      { return true }
func (*lateLingerer) Validate() error    { return nil }
func (e *lateLingerer) Install(context.Context, actor.Host) (actor.Extension, error) {
	return e, nil
}
func (*lateLingerer) Shutdown(context.Context) error { return nil }
func (e *lateLingerer) Terminated() <-chan struct{}  { return e.done }

// TestReview6ShutdownBoundedByCtxWithLingererOpenAfterNil: Shutdown(ctx)
// returns when ctx ends whatever an extension does. When every part has
// returned nil, System.terminateWhenDone runs terminate on Shutdown's
// goroutine, and terminate waits for the extensions' Terminated channels
// with context.Background(): a Lingerer whose Shutdown returned nil with
// its channel still open (an extension's bug, or a channel closed by a
// goroutine of its own just after) holds Shutdown past its ctx, for good
// when the channel never closes.
func TestReview6ShutdownBoundedByCtxWithLingererOpenAfterNil(t *testing.T) {
	ext := &lateLingerer{done: make(chan struct{})}
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2, Extensions: []actor.ExtensionInstaller{ext}})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	ret := make(chan error, 1)
	go func() { ret <- sys.Shutdown(ctx) }()
	select {
	case err := <-ret:
		// Its ctx ended with the extension's goroutines unaccounted for:
		// not nil, and Terminated still open.
		require.Error(t, err)
		require.False(t, closed(sys.Terminated()))
	case <-time.After(5 * time.Second):
		close(ext.done) // lets the stuck Shutdown return, for goleak
		<-ret
		t.Fatal("Shutdown(ctx) still waiting for an extension's Terminated 5 s after its 100 ms ctx ended")
	}
	close(ext.done)
	awaitTerminated(t, sys)
}
