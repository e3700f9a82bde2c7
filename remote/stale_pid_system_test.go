package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// TestStalePIDAfterRestartAtSameAddress: a node dies and a new incarnation
// starts at the same address and spawns an actor with a generated ID, as
// its predecessor did. A peer still holds the PID of the predecessor's
// actor and sends to it: the message dead-letters on the new incarnation,
// and the new actor never sees it. Generated IDs start at a random base
// per system (actor.SystemConfig.DeterministicIDs); counting from 1, both
// incarnations named their first actor alike and the stale PID reached the
// new one.
func TestStalePIDAfterRestartAtSameAddress(t *testing.T) {
	sysB, _ := startSystem(t, "b", testConfig(t))
	a1, err := actor.NewSystem(actor.SystemConfig{Name: "a1", Extensions: []actor.ExtensionInstaller{remote.Install(testConfig(t))}})
	require.NoError(t, err)
	ra1 := remote.Get(a1)
	// B learns the PID of a1's first generated actor from its answer.
	stale := remotePID(a1.Root().Spawn(echoProps("a1")))
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysB.Root(), stale, &Echo{Text: "one"})
	require.NoError(t, err)
	require.Equal(t, "a1", rep.By)

	ends := events[*remote.EndpointTerminated](t, sysB)
	a2 := restartAt(t, a1, ra1, "a2")
	dead := events[*actor.DeadLetterEvent](t, a2)
	got := make(chan *Echo, 1)
	fresh := a2.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Echo); ok {
			select {
			case got <- m:
			default:
			}
		}
	}))

	// B notices that a1 is gone, then makes a round trip to a2: its
	// messages to the address go over a connection to a2 from then on.
	// (Sent earlier, the message could go into the dead connection to a1,
	// or be refused as addressed to a1, before B notices the restart.)
	waitFor(t, ends, "a1's endpoint terminated", func(e *remote.EndpointTerminated) bool { return e.NodeID == ra1.NodeID() })
	echo := remotePID(echoOn(t, a2, "echo", "a2"))
	rep, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), echo, &Echo{Text: "two"})
	require.NoError(t, err)
	require.Equal(t, "a2", rep.By)

	sysB.Root().Send(stale, &Echo{Text: "stale"})
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case m := <-got:
			t.Fatalf("%s on the new incarnation received %+v, sent to %s of the old one", fresh.ID, m, stale.ID)
		case e := <-dead:
			if m, ok := e.Message.(*Echo); ok && m.Text == "stale" {
				require.Equal(t, stale.ID, e.PID.ID, "the dead letter names the stale PID")
				return
			}
		case <-timer.C:
			t.Fatalf("timed out waiting for the stale PID's message to dead-letter on the new incarnation (dead letters: a2 %d, b %d)", a2.DeadLetters(), sysB.DeadLetters())
		}
	}
}
