package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A PID of another address in a system without remote: the dead letter
// and a request's error say why (ErrNoRemote); before, the dead letter had
// no reason and the request failed as if the actor did not exist there.
func TestNoRemoteDeadLetterSaysWhy(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	events := make(chan *actor.DeadLetterEvent, 4)
	sub := actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { events <- e })
	t.Cleanup(func() { sys.EventStream().Unsubscribe(sub) })

	far := actor.NewPID("127.0.0.1:7000", "lobby")
	sys.Root().Send(far, "hello")
	select {
	case e := <-events:
		require.ErrorIs(t, e.Reason, actor.ErrNoRemote)
		require.ErrorContains(t, e.Reason, "127.0.0.1:7000")
	case <-time.After(10 * time.Second):
		t.Fatal("no dead letter")
	}
	_, err = actor.Request[string](t.Context(), sys.Root(), far, "hello")
	require.ErrorIs(t, err, actor.ErrNoRemote)
	require.ErrorIs(t, err, actor.ErrDeadLetter)

	// A local PID that names no actor is a dead letter without a reason,
	// as before.
	sys.Root().Send(actor.NewPID(sys.Address(), "nobody"), "hello")
	select {
	case e := <-events:
		if e.PID.ID == "lobby" { // the request's own dead letter
			e = <-events
		}
		require.NoError(t, e.Reason)
	case <-time.After(10 * time.Second):
		t.Fatal("no dead letter")
	}
}
