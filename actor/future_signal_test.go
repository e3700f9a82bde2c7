package actor

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
)

func newSignalTestSystem(t *testing.T) *System {
	t.Helper()
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	return sys
}

// A request from outside allocates the Future only: its done signal comes
// from the pool (future_signal.go). With a channel of its own per future it
// is two allocations.
func TestRequestSignalAllocs(t *testing.T) {
	sys := newSignalTestSystem(t)
	reply := &struct{ n int }{1}
	echo := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(string); ok {
			c.Respond(reply)
		}
	}))
	ctx := context.Background()
	for range 100 { // warm the pool and the mailbox's ring
		_, err := Request[*struct{ n int }](ctx, sys.Root(), echo, "q")
		require.NoError(t, err)
	}
	allocs := leastAllocs(2000, 1, func() {
		if _, err := Request[*struct{ n int }](ctx, sys.Root(), echo, "q"); err != nil {
			t.Fatal(err)
		}
	})
	require.LessOrEqual(t, allocs, 1.0, "allocations per request")
}

// A late answer to a request that already completed (answered, or timed
// out) never reaches a later request, although the later one may wait on
// the same pooled channel: the completed future drops it.
func TestRequestSignalLateAnswer(t *testing.T) {
	sys := newSignalTestSystem(t)
	gate := make(chan struct{})
	var first *PID
	srv := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		switch m := c.Message().(type) {
		case string:
			switch m {
			case "first":
				first = c.Sender()
				c.Respond("first-answer")
			case "second":
				c.Send(first, "stale") // a second answer to the first request
				c.Send(first, "stale")
				c.Respond("second-answer")
			case "slow":
				<-gate
				c.Respond("slow-answer") // after the caller gave up
			case "after":
				c.Respond("after-answer")
			}
		}
	}))
	ctx := context.Background()
	for range 200 {
		got, err := Request[string](ctx, sys.Root(), srv, "first")
		require.NoError(t, err)
		require.Equal(t, "first-answer", got)
		got, err = Request[string](ctx, sys.Root(), srv, "second")
		require.NoError(t, err)
		require.Equal(t, "second-answer", got)
	}
	// A request that timed out: its answer comes after the caller left.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err := Request[string](cctx, sys.Root(), srv, "slow")
	require.True(t, errors.Is(err, ErrTimeout), "err %v", err)
	close(gate)
	for range 200 {
		got, err := Request[string](ctx, sys.Root(), srv, "after")
		require.NoError(t, err)
		require.Equal(t, "after-answer", got)
	}
}
