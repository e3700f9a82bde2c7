package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// docs/testing.md ("Deterministic mode"): on a manual system a blocking
// Request from the test's goroutine does not run the system, so it waits
// for its ctx and fails with ErrTimeout; a future made, then the system
// run, then read, has the answer; its timeout is virtual time.
func TestManualSystemRequestNeedsTheSystemRun(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := actor.Request[string](ctx, sys.Root(), echo, "blocked")
	require.ErrorIs(t, err, actor.ErrTimeout)

	f := sys.Root().RequestFuture(echo, "hi", time.Second)
	sys.RunUntilIdle()
	r, err := f.Result()
	require.NoError(t, err)
	require.Equal(t, "hi", r)

	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	f = sys.Root().RequestFuture(silent, "hi", time.Second)
	sys.Advance(time.Second)
	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrTimeout)
}
