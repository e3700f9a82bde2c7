package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// TestReview6EnvelopedPoisonThroughStalePIDSparesTheNewActor: cell.rebind
// says a PoisonPill meant for the stopped actor stays with it, and Sink
// keeps a bare *PoisonPill back; but a pill in a *MessageEnvelope (a
// message with headers: a tracing sender middleware wraps what an actor
// sends so, Forward wraps a message that came with headers, a user sends
// one) falls to Sink's default case, is rebound, and the invoker unwraps
// it (invokeEnveloped): the new actor under the name is poisoned.
func TestReview6EnvelopedPoisonThroughStalePIDSparesTheNewActor(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()
	echo := actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(string); ok {
			c.Respond(m)
		}
	})
	old, err := root.SpawnNamed(echo, "svc")
	require.NoError(t, err)
	_, err = actor.Request[string](t.Context(), root, old, "cache") // old now caches the first actor
	require.NoError(t, err)
	require.NoError(t, root.StopFuture(old).Wait())

	live, err := root.SpawnNamed(echo, "svc")
	require.NoError(t, err)
	stopped := make(chan struct{})
	watcher := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Watch(live)
		case *actor.Terminated:
			close(stopped)
		}
	}))
	defer root.Stop(watcher)
	_, err = actor.Request[string](t.Context(), root, live, "watched") // the Watch is in place
	require.NoError(t, err)

	root.Send(old, &actor.MessageEnvelope{Header: actor.Header{"trace": "1"}, Message: &actor.PoisonPill{}})
	got, err := actor.Request[string](t.Context(), root, live, "still there?")
	select {
	case <-stopped:
		t.Fatal("a PoisonPill in an envelope, sent through the PID of the stopped actor, stopped the new actor under its name")
	default:
	}
	require.NoError(t, err)
	require.Equal(t, "still there?", got)
}
