package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// Once Unwatch returns, no Terminated of that actor reaches Receive, even
// one already queued: the watched actor stopped, and its Terminated was
// queued behind a message in which the watcher unwatches it. Before, that
// Terminated was delivered after the Unwatch.
func TestNoTerminatedAfterUnwatch(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	target := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	var got []any
	watcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			got = append(got, m)
			switch m {
			case "watch":
				c.Watch(target)
			case "unwatch":
				c.Unwatch(target)
			}
		case *actor.Terminated:
			got = append(got, m.Who.ID)
		}
	}))
	sys.Root().Send(watcher, "watch")
	sys.RunUntilIdle()
	// The target stops first; its Terminated reaches the watcher's queue
	// behind "unwatch".
	sys.Root().Stop(target)
	sys.Root().Send(watcher, "unwatch")
	sys.RunUntilIdle()
	require.Equal(t, []any{"watch", "unwatch"}, got)

	// Watching again (a dead actor) gets a Terminated, once.
	sys.Root().Send(watcher, "watch")
	sys.RunUntilIdle()
	require.Equal(t, []any{"watch", "unwatch", "watch", target.ID}, got)
}
