package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// countingProcess is a custom Process that counts the user messages it gets.
type countingProcess struct{ n chan any }

func (p *countingProcess) SendUser(_ *actor.PID, msg any, _ *actor.PID) { p.n <- msg }
func (p *countingProcess) SendSystem(*actor.PID, actor.SystemMessage)   {}
func (p *countingProcess) StopProcess(*actor.PID)                       {}

type valueProcess struct{ ids []string }

func (valueProcess) SendUser(*actor.PID, any, *actor.PID)       {}
func (valueProcess) SendSystem(*actor.PID, actor.SystemMessage) {}
func (valueProcess) StopProcess(*actor.PID)                     {}

// TestUnregisterProcessRemovesOnlyItsOwnRegistration: UnregisterProcess
// given an actor's PID, a rebuilt PID or a PID whose ID was registered
// again leaves the registry as it is; a non-comparable process is refused
// at registration instead of panicking at removal.
func TestUnregisterProcessRemovesOnlyItsOwnRegistration(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{})
	require.NoError(t, err)
	defer func() { require.NoError(t, sys.Shutdown(context.Background())) }()

	got := make(chan any, 4)
	act, err := sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			got <- s
		}
	}), "worker")
	require.NoError(t, err)
	assert.False(t, sys.UnregisterProcess(act), "an actor's PID is not a registration")
	assert.False(t, sys.UnregisterProcess(actor.NewPID(sys.Address(), act.ID)))
	sys.Root().Send(actor.NewPID(sys.Address(), act.ID), "still there")
	select {
	case m := <-got:
		assert.Equal(t, "still there", m)
	case <-time.After(5 * time.Second):
		t.Fatal("the actor no longer resolves")
	}

	p1 := &countingProcess{n: make(chan any, 4)}
	pid1, err := sys.RegisterProcess("custom", p1)
	require.NoError(t, err)
	_, err = sys.RegisterProcess("custom", p1)
	require.ErrorIs(t, err, actor.ErrNameExists)
	require.True(t, sys.UnregisterProcess(pid1))
	assert.False(t, sys.UnregisterProcess(pid1), "already removed")

	p2 := &countingProcess{n: make(chan any, 4)}
	pid2, err := sys.RegisterProcess("custom", p2)
	require.NoError(t, err)
	assert.False(t, sys.UnregisterProcess(pid1), "the old PID must not remove the new registration")
	sys.Root().Send(actor.NewPID(sys.Address(), "custom"), "to p2")
	assert.Equal(t, "to p2", <-p2.n)
	require.True(t, sys.UnregisterProcess(pid2))

	_, err = sys.RegisterProcess("value", valueProcess{})
	require.ErrorIs(t, err, actor.ErrInvalidProcess)
}

// Bad input to RegisterProcess and to a spawn is refused with a sentinel
// error: no process, an empty ID, nil Props. Before, these were errors
// made with errors.New (no sentinel to test for) and an empty ID was
// registered.
func TestRegisterAndSpawnBadInputSentinels(t *testing.T) {
	sys := testkit.NewSystem(t)
	_, err := sys.RegisterProcess("nil", nil)
	require.ErrorIs(t, err, actor.ErrInvalidProcess)
	_, err = sys.RegisterProcess("", &countingProcess{n: make(chan any, 1)})
	require.ErrorIs(t, err, actor.ErrInvalidProcess)
	_, err = sys.Root().SpawnNamed(nil, "x")
	require.ErrorIs(t, err, actor.ErrNilProps)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			_, err := c.SpawnNamed(nil, "child")
			c.Respond(err)
		}
	}))
	got, err := actor.Request[error](context.Background(), sys.Root(), pid, "spawn")
	require.NoError(t, err)
	require.ErrorIs(t, got, actor.ErrNilProps)
}

// panickyProcess is a custom Process with a bug in every method.
type panickyProcess struct{}

func (*panickyProcess) SendUser(*actor.PID, any, *actor.PID)       { panic("send bug") }
func (*panickyProcess) SendSystem(*actor.PID, actor.SystemMessage) { panic("system bug") }
func (*panickyProcess) StopProcess(*actor.PID)                     { panic("stop bug") }

// A custom Process that panics when handed a message makes that message a
// dead letter whose reason wraps the *PanicError; the goroutine that
// delivered it goes on. That goroutine may be the runtime's own: here the
// timer goroutine, which completes a timed-out future piped to the
// process, and would have ended the process. Before, the panic went
// through to whoever sent.
func TestCustomProcessPanicIsDeadLetter(t *testing.T) {
	sys := testkit.NewSystem(t)
	pid, err := sys.RegisterProcess("panicky", &panickyProcess{})
	require.NoError(t, err)
	events := make(chan *actor.DeadLetterEvent, 8)
	sub := actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { events <- e })
	defer sys.EventStream().Unsubscribe(sub)
	expect := func(value string) {
		t.Helper()
		select {
		case e := <-events:
			var pe *actor.PanicError
			require.ErrorAs(t, e.Reason, &pe)
			require.Equal(t, value, pe.Value)
		case <-time.After(10 * time.Second):
			t.Fatal("no dead letter")
		}
	}
	silent := sys.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	sys.Root().RequestFuture(silent, "never answered", time.Millisecond).PipeTo(pid)
	expect("send bug")
	require.NotPanics(t, func() {
		sys.Root().Send(pid, "direct")
		sys.Root().Stop(pid)
	})
	expect("send bug")
	expect("system bug")
}
