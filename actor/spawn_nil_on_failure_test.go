package actor_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Spawn and SpawnPrefix return nil when the spawn fails, as their godoc
// says, the system having stopped and the parent stopping included.
// Before, those two refusals returned the PID of an actor that never ran
// (SpawnNamed's PID, with the error dropped): a caller that checked for
// nil, as told, went on with a dead PID.
func TestSpawnReturnsNilOnFailure(t *testing.T) {
	t.Run("system_stopped", func(t *testing.T) {
		sys, err := actor.NewSystem(actor.SystemConfig{Workers: 1})
		require.NoError(t, err)
		require.NoError(t, sys.Shutdown(context.Background()))
		props := actor.PropsFromFunc(func(actor.Context) {})
		require.Nil(t, sys.Root().Spawn(props))
		require.Nil(t, sys.Root().SpawnPrefix(props, "p"))
		_, err = sys.Root().SpawnNamed(props, "")
		require.ErrorIs(t, err, actor.ErrSystemStopped)
	})
	t.Run("parent_stopping", func(t *testing.T) {
		sys := testkit.NewSystem(t)
		type spawned struct{ spawn, prefix *actor.PID }
		got := make(chan spawned, 1)
		child := actor.PropsFromFunc(func(actor.Context) {})
		pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
			if _, ok := c.Message().(*actor.Stopped); ok {
				got <- spawned{c.Spawn(child), c.SpawnPrefix(child, "p")}
			}
		}))
		require.NoError(t, sys.Root().StopFuture(pid).Wait())
		s := <-got
		require.Nil(t, s.spawn)
		require.Nil(t, s.prefix)
	})
}
