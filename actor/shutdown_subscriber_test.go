package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// Shutdown's context bounds its wait for the EventStream's subscribers too:
// with a subscriber that blocks, Shutdown returns the context's error when
// the context ends. Before, it waited for the subscriber's goroutine
// unconditionally, past its context, for as long as the subscriber
// blocked.
func TestShutdownBoundedByCtxWithBlockedSubscriber(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	inside, release := make(chan struct{}), make(chan struct{})
	sys.EventStream().Subscribe(func(any) {
		close(inside)
		<-release // blocks until the test lets go
	})
	sys.EventStream().Publish("event")
	<-inside
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res := make(chan error, 1)
	go func() { res <- sys.Shutdown(ctx) }()
	select {
	case err := <-res:
		require.ErrorIs(t, err, context.DeadlineExceeded)
	case <-time.After(10 * time.Second):
		close(release)
		<-res
		t.Fatal("Shutdown waited past its context for a blocked subscriber")
	}
	close(release)
	// A later Shutdown, with time to spare, waits for the subscriber to
	// return (TestLaterShutdownWaitsForWhatWasLeft).
	require.NoError(t, sys.Shutdown(context.Background()))
	select {
	case <-sys.Terminated():
	default:
		t.Fatal("a later Shutdown returned nil before the system terminated")
	}
}
