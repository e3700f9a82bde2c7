package actor

import (
	"context"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Started is an actor's first message even when a message or a Stop
// reaches it by name (a PID rebuilt from its ID, as from the wire) in the
// window between its registration and its parent's listing it: Started is
// queued before the registration, with the mailbox claimed, and the actor
// is handed to its dispatcher only after. Before, Started was posted after
// the listing: such a message scheduled the mailbox and Receive got it
// before Started, and such a Stop gave the actor Stopping and Stopped and
// no Started. The test holds the spawn in that window by holding the locks
// of the user guardian's child list, which the spawn takes after it has
// registered the actor.
func TestStartedFirstForMessageByName(t *testing.T) {
	for _, tc := range []struct {
		name string
		send func(sys *System, pid *PID)
		want []any
	}{
		{"message", func(sys *System, pid *PID) { sys.Root().Send(pid, "by name") }, []any{startedMsg, "by name"}},
		{"stop", func(sys *System, pid *PID) { sys.Root().Stop(pid) }, []any{startedMsg, stoppingMsg, stoppedMsg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
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
				case *Started, *Stopping, *Stopped, string:
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
			tc.send(sys, NewPID(sys.Address(), "early"))
			exec.RunUntilIdle()
			for i := range g.shards {
				g.shards[i].mu.Unlock()
			}
			require.NoError(t, <-spawned)
			exec.RunUntilIdle()
			require.Equal(t, tc.want, got)
		})
	}
}
