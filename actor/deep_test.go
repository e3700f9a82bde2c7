package actor_test

import (
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// descend asks an actor of a chain to spawn the rest of it.
type descend struct {
	left int
	done chan *actor.PID
}

// chainProps makes actors that spawn one child each until the chain is
// deep enough; the last one reports its PID.
func chainProps() *actor.Props {
	var props *actor.Props
	props = actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*descend); ok {
			if m.left == 0 {
				m.done <- c.Self()
				return
			}
			c.Send(c.Spawn(props), &descend{left: m.left - 1, done: m.done})
		}
	})
	return props
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// An actor ID stays short whatever the depth of the actor (an ID that held
// the whole path made a 10,000-deep chain cost memory in the square of its
// depth); the path is computed on demand and looks the actor up again.
func TestDeepChainIDsStayShort(t *testing.T) {
	const depth = 10000
	sys := testkit.NewSystem(t)
	before := heapInUse()
	done := make(chan *actor.PID, 1)
	top := sys.Root().Spawn(chainProps())
	sys.Root().Send(top, &descend{left: depth - 1, done: done})
	var last *actor.PID
	select {
	case last = <-done:
	case <-time.After(time.Minute):
		t.Fatal("the chain was not built")
	}
	after := heapInUse()
	t.Logf("heap in use for a %d-deep chain: %.1f MiB (%d B per actor); deepest ID %q",
		depth, float64(after-before)/(1<<20), (after-before)/depth, last.ID)
	require.LessOrEqual(t, len(last.ID), 32, "the deepest ID grows with its depth")

	path, ok := sys.PathOf(last)
	require.True(t, ok)
	require.Equal(t, depth, strings.Count(path, "/")+1, "one name per level")
	require.True(t, strings.HasPrefix(path, top.ID+"/"), "the path starts at the top-level actor")
	found, ok := sys.LookupPath(path)
	require.True(t, ok)
	require.True(t, found.Equal(last))
}

// Named actors are found by their path, given names and generated ones
// alike; a stopped actor is not.
func TestLookupPath(t *testing.T) {
	sys := testkit.NewSystem(t)
	kids := make(chan *actor.PID, 2)
	var props *actor.Props
	props = actor.PropsFromFunc(func(c actor.Context) {
		if name, ok := c.Message().(string); ok {
			var kid *actor.PID
			if name == "" {
				kid = c.SpawnPrefix(props, "gen")
			} else {
				var err error
				kid, err = c.SpawnNamed(props, name)
				require.NoError(t, err)
			}
			kids <- kid
		}
	})
	orders, err := sys.Root().SpawnNamed(props, "orders")
	require.NoError(t, err)
	sys.Root().Send(orders, "w")
	w := <-kids
	sys.Root().Send(w, "")
	gen := <-kids

	for _, tc := range []struct {
		pid  *actor.PID
		path string
	}{
		{orders, "orders"},
		{w, "orders/w"},
		{gen, "orders/w/" + gen.ID[strings.IndexByte(gen.ID, '/')+1:]},
	} {
		path, ok := sys.PathOf(tc.pid)
		require.True(t, ok, tc.path)
		require.Equal(t, tc.path, path)
		found, ok := sys.LookupPath(tc.path)
		require.True(t, ok, tc.path)
		require.Same(t, tc.pid, found)
	}
	require.True(t, strings.HasPrefix(gen.ID[strings.IndexByte(gen.ID, '/')+1:], "gen$"))
	_, ok := sys.LookupPath("orders/nobody")
	require.False(t, ok)
	_, ok = sys.LookupPath("w")
	require.False(t, ok, "a nested actor is no top-level one")

	require.NoError(t, sys.Root().StopFuture(w).Wait())
	_, ok = sys.LookupPath("orders/w")
	require.False(t, ok, "a stopped actor is found")
	_, ok = sys.PathOf(gen)
	require.False(t, ok, "a stopped actor has a path")
}
