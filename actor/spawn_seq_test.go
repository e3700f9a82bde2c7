package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A name of the generated form is a name like any other; the spawn whose
// generated ID it took gets the next free one instead of ErrNameExists
// (before: Spawn returned nil for it), at the top level and for children.
func TestGeneratedIDSkipsATakenName(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{DeterministicIDs: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()
	nop := actor.PropsFromFunc(func(actor.Context) {})

	named, err := root.SpawnNamed(nop, "$2")
	require.NoError(t, err)
	var ids []string
	for range 3 {
		pid := root.Spawn(nop)
		require.NotNil(t, pid, "a generated spawn after %v", ids)
		ids = append(ids, pid.ID)
	}
	require.Equal(t, []string{"$1", "$3", "$4"}, ids)
	require.Equal(t, "$2", named.ID)

	// Children: a child named "$6" of a parent whose generated children
	// would reach "#i/$6".
	kids := make(chan []string, 1)
	parent := root.Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); !ok {
			return
		}
		var got []string
		p, err := c.SpawnNamed(nop, "$6")
		if err != nil {
			got = append(got, err.Error())
		} else {
			got = append(got, p.ID)
		}
		for range 2 {
			p, err := c.SpawnNamed(nop, "")
			if err != nil {
				got = append(got, err.Error())
				continue
			}
			got = append(got, p.ID)
		}
		kids <- got
	}))
	require.NotNil(t, parent)
	var got []string
	select {
	case got = <-kids:
	case <-time.After(10 * time.Second):
		t.Fatal("the parent's Started never ran")
	}
	require.Len(t, got, 3)
	require.Regexp(t, `^#\d+/\$6$`, got[0])
	require.Regexp(t, `^#\d+/\$7$`, got[1], "the generated child skipped the named one: %v", got)
	require.Regexp(t, `^#\d+/\$8$`, got[2])
}
