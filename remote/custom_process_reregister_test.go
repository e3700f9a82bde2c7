package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// collector is a custom process (RegisterProcess) that passes on the text
// of each Echo it takes.
type collector struct{ got chan string }

func (c *collector) SendUser(_ *actor.PID, msg any, _ *actor.PID) {
	if m, ok := msg.(*Echo); ok {
		c.got <- m.Text
	}
}
func (*collector) SendSystem(*actor.PID, actor.SystemMessage) {}
func (*collector) StopProcess(*actor.PID)                     {}

// TestReregisteredCustomProcessFromTheWire: once a custom process's
// registration ended (UnregisterProcess) and its ID was registered again,
// messages from another node for that ID reach the new process, as a PID
// made here from the ID does. Before, the receiving node's caches of
// inbound targets (the target cache and the connection's last target)
// kept the first process for good: a custom process never counted as
// stopped, so they never looked the ID up again (a router stopped and
// created again under its name was unreachable from other nodes).
func TestReregisteredCustomProcessFromTheWire(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, rb := startSystem(t, "b", testConfig(t))
	take := func(c *collector) string {
		select {
		case s := <-c.got:
			return s
		case <-ctxWait(t).Done():
			t.Fatal("timed out waiting for a message")
			return ""
		}
	}

	first := &collector{got: make(chan string, 16)}
	pid, err := sysB.RegisterProcess("svc", first)
	require.NoError(t, err)
	sysA.Root().Send(actor.NewPID(rb.Address(), "svc"), &Echo{Text: "1"})
	require.Equal(t, "1", take(first))

	require.True(t, sysB.UnregisterProcess(pid))
	second := &collector{got: make(chan string, 16)}
	_, err = sysB.RegisterProcess("svc", second)
	require.NoError(t, err)
	sysA.Root().Send(actor.NewPID(rb.Address(), "svc"), &Echo{Text: "2"})
	require.Equal(t, "2", take(second))
	require.Empty(t, first.got, "the unregistered process took a message from the wire")
}
