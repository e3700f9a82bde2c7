package remote_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// panickingProcess is a custom process (RegisterProcess) whose every
// delivery panics.
type panickingProcess struct{}

func (panickingProcess) SendUser(*actor.PID, any, *actor.PID)       { panic("boom") }
func (panickingProcess) SendSystem(*actor.PID, actor.SystemMessage) { panic("boom") }
func (panickingProcess) StopProcess(*actor.PID)                     {}

// A custom process that panics when a message from another node reaches it
// is a dead letter there whose reason wraps the *actor.PanicError, and the
// connection's reader goes on; before, the panic went up the reader and
// ended the receiving node's process. A request to it fails at once.
func TestCustomProcessPanicFromTheWire(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, rb := startSystem(t, "b", testConfig(t))
	boom, err := sysB.RegisterProcess("boom", panickingProcess{})
	require.NoError(t, err)
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	dl := events[*actor.DeadLetterEvent](t, sysB)

	target := actor.NewPID(rb.Address(), boom.ID)
	sysA.Root().Send(target, &Echo{Text: "one-way"})
	e := waitFor(t, dl, "dead letter for the panicking process", func(e *actor.DeadLetterEvent) bool { return e.PID.ID == "boom" })
	var pe *actor.PanicError
	require.ErrorAs(t, e.Reason, &pe)
	assert.Equal(t, "boom", pe.Value)

	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), target, &Echo{Text: "request"})
	require.Error(t, err)
	assert.ErrorIs(t, err, actor.ErrDeadLetter)

	// The reader goes on: the next message on the connection arrives.
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "after"})
	require.NoError(t, err)
	assert.Equal(t, "after", rep.Text)
}
