package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// System.SendSystem of a nil *Watch (it takes any SystemMessage) does
// nothing, whether its target is live, has no process or stopped a moment
// ago; before, the stopped target's refusal read the Watch's watcher and
// panicked on the sender's goroutine.
func TestSendSystemNilWatch(t *testing.T) {
	sys := testkit.NewSystem(t)
	var w *actor.Watch
	sys.SendSystem(actor.NewPID(sys.Address(), "nobody"), w)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.SendSystem(pid, w)
	sys.SendSystem(pid, nil)
	_, err := sys.Root().StopFuture(pid).ResultContext(context.Background())
	require.NoError(t, err)
	sys.SendSystem(pid, w)
}
