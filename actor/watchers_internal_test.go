package actor

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// An actor watched by many is watched through an indexed set (pidSet), as
// one that watches many is: a Watch and an Unwatch cost the same whatever
// the number of watchers. Before, the watchers were a slice scanned on
// every Watch, so n watchers cost n² (a remote peer's 200,000 watches of
// one actor took 82 s; remote bounds how many a peer may hold, not this).
// The set stays exact: a repeated Watch adds nothing, every Unwatch takes
// its watcher out (the last one moved into the gap keeps its index), and
// the stop tells each watcher left exactly once.
func TestManyWatchersIndexedAndExact(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	defer func() { require.NoError(t, sys.Shutdown(ctx)) }()

	const n = 200
	// The watchers as the target holds them, read on its own turn (after
	// the system messages posted before: they run before a user message).
	held := make(chan []*PID, 1)
	indexed := make(chan bool, 1)
	target := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		if c.Message() == "inspect" {
			x := c.(*cell).x
			held <- append([]*PID(nil), x.watchers.list...)
			indexed <- x.watchers.m != nil
		}
	}))
	told := make(chan string, 2*n)
	watchers := make([]*PID, n)
	for i := range watchers {
		watchers[i], err = sys.Root().SpawnNamed(PropsFromFunc(func(c Context) {
			switch m := c.Message().(type) {
			case *Started:
				c.Watch(target)
				c.Watch(target) // again: no second entry
			case string:
				if m == "unwatch" {
					c.Unwatch(target)
				}
				c.Respond(m)
			case *Terminated:
				told <- c.Self().ID
			}
		}), "watcher-"+strconv.Itoa(i))
		require.NoError(t, err)
	}
	for i, w := range watchers {
		msg := "ready" // answered after Started: its Watches are posted
		if i%2 == 0 {
			msg = "unwatch"
		}
		_, err := Request[string](ctx, sys.Root(), w, msg)
		require.NoError(t, err)
	}
	sys.Root().Send(target, "inspect")
	got := <-held
	require.True(t, <-indexed, "many watchers are indexed")
	require.Len(t, got, n/2)
	seen := map[string]bool{}
	for _, w := range got {
		i, err := strconv.Atoi(w.ID[len("watcher-"):])
		require.NoError(t, err)
		require.Equal(t, 1, i%2, "an unwatched watcher is still held: %s", w.ID)
		require.False(t, seen[w.ID], "held twice: %s", w.ID)
		seen[w.ID] = true
	}

	require.NoError(t, sys.Root().StopFuture(target).Wait())
	for range n / 2 {
		select {
		case id := <-told:
			require.True(t, seen[id], "told but not held: %s", id)
			delete(seen, id) // told twice fails here
		case <-ctx.Done():
			require.FailNow(t, "not every watcher was told", "left: %d", len(seen))
		}
	}
}
