package actor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// hostGrab is an extension that keeps the Host it is installed into.
type hostGrab struct{ host actor.Host }

func (*hostGrab) Name() string                   { return "host-grab" }
func (*hostGrab) Requires() []string             { return nil }
func (*hostGrab) Enabled() bool                  { return true }
func (*hostGrab) Validate() error                { return nil }
func (*hostGrab) Shutdown(context.Context) error { return nil }
func (g *hostGrab) Install(_ context.Context, h actor.Host) (actor.Extension, error) {
	g.host = h
	return g, nil
}

// Host.DeadLetter (the hook for extensions that deliver messages
// themselves): counted, published with the reason, and a local future
// named by a fresh PID (as rebuilt from the wire) fails at once.
func TestDeadLetterHook(t *testing.T) {
	grab := &hostGrab{}
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Extensions = append(c.Extensions, grab) })
	host := grab.host
	require.Same(t, sys, host.System())
	events := make(chan *actor.DeadLetterEvent, 4)
	sub := actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { events <- e })
	defer sys.EventStream().Unsubscribe(sub)
	host.SetRemoteHandler(func(*actor.PID) actor.Process { return nil }) // futures become reachable by ID

	reason := errors.New("queue full")
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {})) // never answers
	f := sys.Root().RequestFuture(silent, "msg", 0)
	host.DeadLetter(actor.NewPID("elsewhere:1", "x"), "msg", actor.NewPID(f.PID().Address, f.PID().ID), reason)
	_, err := f.Result()
	require.ErrorIs(t, err, reason)
	e := <-events
	assert.Equal(t, "x", e.PID.ID)
	assert.ErrorIs(t, e.Reason, reason)
	assert.GreaterOrEqual(t, sys.DeadLetters(), uint64(1))
}

// SetRemoteHandler(nil) removes the resolver: a PID of another address is a
// dead letter again; before, the next send to one called the nil handler
// and panicked on the sender's goroutine.
func TestSetRemoteHandlerNil(t *testing.T) {
	grab := &hostGrab{}
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.Extensions = append(c.Extensions, grab) })
	grab.host.SetRemoteHandler(nil)
	_, err := sys.Root().RequestFuture(actor.NewPID("elsewhere:1", "x"), "msg", time.Second).Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
}
