package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A future never shares its ID with an actor: the name the next future
// would get (a user's, or one a peer names in a remote spawn after seeing a
// future's ID as the sender of a request) is refused, so that future's
// answer from the wire reaches it. Before, such an actor was spawned, the
// future was left unregistered and the answer, looked up by ID, went to the
// actor.
func TestFutureIDNeverTakenFromAnActor(t *testing.T) {
	grab := &hostGrab{}
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Extensions = append(c.Extensions, grab) })
	grab.host.SetRemoteHandler(func(*actor.PID) actor.Process { return nil }) // futures become reachable by ID
	// Answers as if from the wire: to a PID rebuilt from the sender's ID.
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Send(actor.NewPID(c.Sender().Address, c.Sender().ID), "re: "+s)
		}
	}))
	first := sys.Root().RequestFuture(echo, "one", time.Minute)
	res, err := first.Result()
	require.NoError(t, err)
	require.Equal(t, "re: one", res)

	// The next future's ID differs from first's in its sequence and in
	// its random tag; any name of a future's form is refused.
	next := first.PID().ID[:len(first.PID().ID)-1] + "x"
	// Such a name is refused, for an actor and a custom process alike, so
	// that only futures have IDs of a future's form.
	_, err = sys.Root().SpawnNamed(actor.PropsFromFunc(func(actor.Context) {}), next)
	require.ErrorIs(t, err, actor.ErrInvalidName)
	_, err = sys.RegisterProcess(next, &nopProcess{})
	require.ErrorIs(t, err, actor.ErrInvalidProcess)

	second := sys.Root().RequestFuture(echo, "two", time.Minute)
	require.True(t, actor.IsFutureID(second.PID().ID))
	res, err = second.Result()
	require.NoError(t, err)
	require.Equal(t, "re: two", res, "the answer reached the future, not the actor")
}

// nopProcess is a custom process that takes nothing.
type nopProcess struct{}

func (*nopProcess) SendUser(*actor.PID, any, *actor.PID)       {}
func (*nopProcess) SendSystem(*actor.PID, actor.SystemMessage) {}
func (*nopProcess) StopProcess(*actor.PID)                     {}
