package actor

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Started is an actor's first message even when a message reaches it by
// name (a PID rebuilt from its ID, as from the wire) in the window between
// its registration and the post of its Started: the mailbox holds user
// messages back until Started has run. Before, such a message scheduled
// the mailbox and Receive got it before Started. The test holds the spawn
// in that window by holding the locks of the user guardian's child list,
// which the spawn takes after it has registered the actor.
func TestStartedFirstForMessageByName(t *testing.T) {
	exec := scheduler.NewManual(scheduler.ManualConfig{})
	sys, err := NewSystem(SystemConfig{Dispatcher: exec, Clock: exec.Clock()})
	require.NoError(t, err)
	defer func() {
		exec.RunUntilIdle()
		require.NoError(t, sys.Shutdown(context.Background()))
	}()
	var got []any
	props := PropsFromFunc(func(c Context) {
		switch m := c.Message().(type) {
		case *Started, string:
			got = append(got, m)
		}
	})
	g := &sys.guardianKids[1]
	for i := range g.shards {
		g.shards[i].mu.Lock()
	}
	spawned := make(chan error, 1)
	go func() {
		_, err := sys.Root().SpawnNamed(props, "early")
		spawned <- err
	}()
	for { // the spawn has registered the actor and waits for the lock
		if _, ok := sys.registry.get("early"); ok {
			break
		}
		runtime.Gosched()
	}
	sys.Root().Send(NewPID(sys.Address(), "early"), "by name")
	exec.RunUntilIdle()
	for i := range g.shards {
		g.shards[i].mu.Unlock()
	}
	require.NoError(t, <-spawned)
	exec.RunUntilIdle()
	require.Equal(t, []any{startedMsg, "by name"}, got)
}
