package actor_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A name under a guardian may not begin with '#': children's IDs are
// "#<parent>/<name>", so such a name could take a child's ID before the
// child existed, and the child's spawn then failed with ErrNameExists.
func TestTopLevelNameCannotTakeAChildID(t *testing.T) {
	sys := testkit.NewSystem(t)
	root := sys.Root()
	idle := actor.PropsFromFunc(func(actor.Context) {})
	type spawned struct {
		pid *actor.PID
		err error
	}
	out := make(chan spawned, 1)
	parent := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if name, ok := c.Message().(string); ok {
			pid, err := c.SpawnNamed(idle, name)
			out <- spawned{pid, err}
		}
	}))
	root.Send(parent, "first")
	first := <-out
	require.NoError(t, first.err)
	prefix := strings.TrimSuffix(first.pid.ID, "first")
	require.True(t, strings.HasPrefix(prefix, "#"), prefix)

	_, err := root.SpawnNamed(idle, prefix+"second")
	require.ErrorIs(t, err, actor.ErrInvalidName)
	root.Send(parent, "second")
	second := <-out
	require.NoError(t, second.err, "the child's ID was free")
	require.Equal(t, prefix+"second", second.pid.ID)

	_, err = root.SpawnNamed(idle, "#")
	require.ErrorIs(t, err, actor.ErrInvalidName)
	// Elsewhere in a name, and in a child's name, '#' is fine.
	_, err = root.SpawnNamed(idle, "a#b")
	require.NoError(t, err)
	root.Send(parent, "#child")
	require.NoError(t, (<-out).err)
}
