package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// The callback runs on the actor's own turn, after the messages
// queued before the future completed, with the actor's state safe to touch.
func TestReenterAfterRunsOnActorsTurn(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s + "!")
		}
	}))
	var log []string
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			log = append(log, m)
			if m == "ask" {
				c.ReenterAfter(c.RequestFuture(echo, "hi", time.Second), func(res any, err error) {
					require.NoError(t, err)
					require.Nil(t, c.Message(), "no current message inside the callback")
					log = append(log, "cont:"+res.(string))
				})
			}
		}
	}))
	sys.Root().Send(pid, "ask")
	sys.Root().Send(pid, "queued before")
	sys.RunUntilIdle()
	require.Equal(t, []string{"ask", "queued before", "cont:hi!"}, log)
}

// A timeout reaches the callback as the error.
func TestReenterAfterTimeout(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	var got error
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "ask" {
			c.ReenterAfter(c.RequestFuture(silent, "x", time.Second), func(_ any, err error) { got = err })
		}
	}))
	sys.Root().Send(pid, "ask")
	sys.RunUntilIdle()
	require.NoError(t, got)
	sys.Advance(time.Second)
	require.ErrorIs(t, got, actor.ErrTimeout)
}

// A stopped actor drops its pending continuations, and a
// restarted one those of its previous instance.
func TestReenterAfterDroppedOnStopAndRestart(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  func(sys *testkit.ManualSystem, pid *actor.PID)
	}{
		{"stop", func(sys *testkit.ManualSystem, pid *actor.PID) { sys.Root().Stop(pid) }},
		{"restart", func(sys *testkit.ManualSystem, pid *actor.PID) { sys.Root().Send(pid, "boom") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sys := testkit.NewManualSystem(t)
			var pending *actor.Future
			gate := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {})) // the test answers

			ran := false
			pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message() {
				case "ask":
					pending = c.RequestFuture(gate, "hold", 0)
					c.ReenterAfter(pending, func(any, error) { ran = true })
				case "boom":
					panic("boom")
				}
			}))
			sys.Root().Send(pid, "ask")
			sys.RunUntilIdle()
			require.NotNil(t, pending)
			f := pending
			tc.end(sys, pid)
			sys.Advance(time.Second)
			sys.Root().Send(f.PID(), "late answer")
			sys.Advance(time.Second)
			_, err := f.Result()
			require.NoError(t, err)
			require.False(t, ran, "a continuation of a gone instance ran")
		})
	}
}
