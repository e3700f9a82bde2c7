package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type deadLetterMarker struct{}

// A subscriber that forwards every DeadLetterEvent to an actor that is
// gone makes one dead letter of each, and no event of it: before, each
// forward was published again, forwarded again, for ever (newuser8's
// dead-letter listener: 1.1 M dead letters in 200 ms).
func TestForwardedDeadLetterEventDoesNotLoop(t *testing.T) {
	sys := testkit.NewSystem(t)
	gone := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	require.NoError(t, sys.Root().StopFuture(gone).Wait())

	events := make(chan any, 16)
	sub := sys.EventStream().Subscribe(func(ev any) {
		switch ev := ev.(type) {
		case *actor.DeadLetterEvent:
			sys.Root().Send(gone, ev) // the listener forwards it: a dead letter too
			events <- ev
		case *deadLetterMarker:
			events <- ev
		}
	})
	defer sys.EventStream().Unsubscribe(sub)

	sys.Root().Send(gone, "lost")
	first := <-events
	require.IsType(t, &actor.DeadLetterEvent{}, first)
	// One subscription takes its events in order: the marker comes after
	// any event the forward published while the first was handled.
	sys.EventStream().Publish(&deadLetterMarker{})
	require.IsType(t, &deadLetterMarker{}, <-events, "the forwarded event came back as an event")
	require.EqualValues(t, 2, sys.DeadLetters(), "the forward is still a dead letter")
}
