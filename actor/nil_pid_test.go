package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A nil PID where a target is required fails the future or request with
// ErrNilPID at once, from the root context and from an actor. Before,
// RootContext.RequestFuture and Request dereferenced it (a panic on the
// caller's goroutine), and StopFuture and PoisonFuture returned a future
// that never completed (the caller waited forever).
func TestNilPIDFailsFast(t *testing.T) {
	sys := testkit.NewSystem(t)
	root := sys.Root()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	_, err := root.RequestFuture(nil, "hi", time.Minute).ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrNilPID)
	_, err = root.RequestFuture(nil, "hi", 0).ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrNilPID)
	_, err = actor.Request[string](ctx, root, nil, "hi")
	require.ErrorIs(t, err, actor.ErrNilPID)
	_, err = root.StopFuture(nil).ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrNilPID)
	_, err = root.PoisonFuture(nil).ResultContext(ctx)
	require.ErrorIs(t, err, actor.ErrNilPID)

	// From an actor (its Request runs the ordinary path).
	pid := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			_, err := c.RequestFuture(nil, "hi", time.Minute).Result()
			_, err2 := actor.Request[string](ctx, c, nil, "hi")
			c.Respond([]error{err, err2})
		}
	}))
	errs, err := actor.Request[[]error](ctx, root, pid, "go")
	require.NoError(t, err)
	require.ErrorIs(t, errs[0], actor.ErrNilPID)
	require.ErrorIs(t, errs[1], actor.ErrNilPID)

	// Watch and Unwatch of nil do nothing, also for an actor that watches
	// enough actors for its set to be a map (where a nil PID panicked).
	watcher := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			for range 10 {
				c.Watch(c.Spawn(actor.PropsFromFunc(func(actor.Context) {})))
			}
			c.Watch(nil)
			c.Unwatch(nil)
			c.Respond("watching")
		}
	}))
	got, err := actor.Request[string](ctx, root, watcher, "go")
	require.NoError(t, err)
	require.Equal(t, "watching", got)
}
