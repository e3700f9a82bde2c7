package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// PathOf escapes "%" and "/" in names and LookupPath reads them back, so a
// path names one actor: a name with "/" (a grain's "kind/id"), a name
// that looks escaped already, and a child with "/" under a parent with "%".
func TestPathEscapesNames(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	nop := actor.PropsFromFunc(func(actor.Context) {})
	kids := map[string]*actor.PID{}
	parent, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			for _, n := range []string{"x/y", "x"} {
				pid, err := c.SpawnNamed(nop, n)
				require.NoError(t, err)
				kids[n] = pid
			}
		}
	}), "50%")
	require.NoError(t, err)
	literal, err := sys.Root().SpawnNamed(nop, "a%2Fb")
	require.NoError(t, err)
	slash, err := sys.Root().SpawnNamed(nop, "a/b")
	require.NoError(t, err)
	sys.RunUntilIdle()

	for want, pid := range map[string]*actor.PID{
		"50%25": parent, "50%25/x%2Fy": kids["x/y"], "50%25/x": kids["x"],
		"a%252Fb": literal, "a%2Fb": slash,
	} {
		path, ok := sys.PathOf(pid)
		require.True(t, ok)
		require.Equal(t, want, path)
		back, ok := sys.LookupPath(path)
		require.True(t, ok, path)
		require.True(t, back.Equal(pid), "LookupPath(%q) = %v, want %v", path, back, pid)
	}
	_, ok := sys.LookupPath("50%25/x/y") // x has no child y
	require.False(t, ok)
}
