package actor_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// ReenterAfter on a FailedFuture (what a nil cluster's CallFuture returns)
// runs its callback with the error, on the actor, as for any future.
// Before, the continuation's PID was not one pipeNoSystem could reach:
// the callback never ran (newuser11: a typed grain that deferred its reply
// there left its caller to time out).
func TestReenterAfterFailedFutureRunsTheCallback(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	errGone := errors.New("no cluster")
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			c.ReenterAfter(actor.FailedFuture(errGone), func(_ any, err error) {
				c.Send(probe.PID(), err)
			})
		}
	}))
	sys.Root().Send(pid, "go")
	sys.RunUntilIdle()
	err := testkit.ExpectMsg[error](probe, 0)
	require.ErrorIs(t, err, errGone)
}
