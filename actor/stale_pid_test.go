package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A PID value held across a re-spawn under the same name reaches the new
// actor with user messages and requests, as a fresh PID of the same ID
// (and a PID from the network) does; before, it kept the stopped actor
// cached and dead-lettered them. A Stop or a PoisonPill through it does
// not stop the new actor.
func TestStalePIDReachesTheNamesNewActor(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()
	echo := func(tag string) *actor.Props {
		return actor.PropsFromFunc(func(c actor.Context) {
			if m, ok := c.Message().(string); ok {
				c.Respond(tag + ":" + m)
			}
		})
	}
	old, err := root.SpawnNamed(echo("first"), "svc")
	require.NoError(t, err)
	got, err := actor.Request[string](t.Context(), root, old, "a")
	require.NoError(t, err)
	require.Equal(t, "first:a", got) // old now caches the first actor
	require.NoError(t, root.StopFuture(old).Wait())

	second, err := root.SpawnNamed(echo("second"), "svc")
	require.NoError(t, err)
	got, err = actor.Request[string](t.Context(), root, old, "b")
	require.NoError(t, err, "a request through the held PID")
	require.Equal(t, "second:b", got)

	// One sender's messages through a held PID keep their order.
	seen := make(chan int, 100)
	counter := actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(int); ok {
			seen <- m
		}
	})
	heldOrdered, err := root.SpawnNamed(counter, "ordered") // caches its actor
	require.NoError(t, err)
	require.NoError(t, root.StopFuture(heldOrdered).Wait())
	_, err = root.SpawnNamed(counter, "ordered")
	require.NoError(t, err)
	for i := range 50 {
		root.Send(heldOrdered, i)
	}
	for i := range 50 {
		select {
		case m := <-seen:
			require.Equal(t, i, m, "message %d out of order", i)
		case <-time.After(10 * time.Second):
			t.Fatalf("only %d of 50 messages through the held PID arrived", i)
		}
	}

	// A Stop and a PoisonPill through a held PID stay with the stopped
	// actor: the new one lives on.
	require.NoError(t, root.StopFuture(second).Wait())
	live, err := root.SpawnNamed(echo("third"), "svc")
	require.NoError(t, err)
	root.Stop(old)
	root.Poison(old)
	got, err = actor.Request[string](t.Context(), root, live, "c")
	require.NoError(t, err)
	require.Equal(t, "third:c", got)
	got, err = actor.Request[string](t.Context(), root, old, "d")
	require.NoError(t, err, "the new actor still lives after a Stop and a Poison through the held PID")
	require.Equal(t, "third:d", got)
}
