package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A generated name of a future's form is refused as a given one is: a
// top-level SpawnPrefix with the prefix "future" made "future$<n>", an
// actor whose ID IsFutureID reports as a future's (remote then reports
// a reply it cannot deliver to it as to a waiting future).
func TestSpawnPrefixOfFutureFormRefused(t *testing.T) {
	sys := testkit.NewSystem(t)
	props := actor.PropsFromFunc(func(actor.Context) {})
	for _, prefix := range []string{"future", "future$x"} {
		pid := sys.Root().SpawnPrefix(props, prefix)
		if pid != nil {
			require.False(t, actor.IsFutureID(pid.ID), "prefix %q gave the actor %s", prefix, pid.ID)
		}
	}
	pid := sys.Root().SpawnPrefix(props, "futures")
	require.NotNil(t, pid, "a prefix that only begins like one is fine")
	require.False(t, actor.IsFutureID(pid.ID))
}
