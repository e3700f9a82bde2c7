package actor_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A Redirect (Host.SetRedirect) that panics is contained: the message is a
// dead letter, as when the Redirect refuses it. Before, the panic went up
// the goroutine that found the child missing: a root Send to a stopped
// child panicked in the caller, and a message still queued when the child
// stopped panicked in the middle of the child's stop, which then never
// took the child off its parent's list nor told anyone; the parent's own
// stop waited for that child for good.
func TestRedirectPanicIsDeadLetter(t *testing.T) {
	grab := &hostGrab{}
	m := testkit.NewManualSystem(t, func(c *actor.SystemConfig) { c.Extensions = append(c.Extensions, grab) })
	var kid *actor.PID
	parent := m.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			kid = c.Spawn(actor.PropsFromFunc(func(actor.Context) {}))
		}
	}))
	m.RunUntilIdle()
	require.NotNil(t, kid)
	offered := 0
	require.NoError(t, grab.host.SetRedirect(parent, func(*actor.PID, string, any, *actor.PID) bool {
		offered++
		panic("redirect bug")
	}))

	before := m.DeadLetters()
	m.Root().Send(kid, "queued") // still queued when the stop drains the mailbox
	stopped := m.Root().StopFuture(kid)
	m.RunUntilIdle()
	select {
	case <-stopped.Done():
	default:
		t.Fatal("the child's stop never completed")
	}
	require.NotPanics(t, func() { m.Root().Send(kid, "late") })
	require.Equal(t, 2, offered)
	require.Equal(t, before+2, m.DeadLetters())

	done := m.Root().StopFuture(parent)
	m.RunUntilIdle()
	select {
	case <-done.Done():
	default:
		t.Fatal("the parent's stop waits for a child that has stopped")
	}
}
