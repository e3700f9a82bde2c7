package await_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/internal/await"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestDoneWinsOverEndedCtx: with done closed and ctx ended both, Done
// reports done every time; a plain select would report ctx's error half
// of the time.
func TestDoneWinsOverEndedCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan struct{})
	close(done)
	for range 64 {
		require.NoError(t, await.Done(ctx, done))
	}
}

// TestDoneReportsCtx: a done channel still open with an ended ctx is
// ctx's error; a ctx that ends while waiting ends the wait.
func TestDoneReportsCtx(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.ErrorIs(t, await.Done(ctx, make(chan struct{})), context.Canceled)

	ctx, cancel = context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- await.Done(ctx, make(chan struct{})) }()
	cancel()
	require.ErrorIs(t, <-errc, context.Canceled)

	done := make(chan struct{})
	go close(done)
	require.NoError(t, await.Done(context.Background(), done))
}

func TestClosed(t *testing.T) {
	ch := make(chan struct{})
	if await.Closed(ch) {
		t.Fatal("an open channel reads as closed")
	}
	close(ch)
	if !await.Closed(ch) {
		t.Fatal("a closed channel reads as open")
	}
}
