package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

var errSupervisionEvent = errors.New("resume me")

// A supervisor's decision about a failed child is published as a
// SupervisionEvent: the child, its parent, the failure and the directive
// applied, for each strategy shape (decider's Resume, Restart, a limit's
// Stop, Escalate past a guardian, ExponentialBackoff's delayed restart).
func TestSupervisionEventNamesTheDecision(t *testing.T) {
	boom := func(c actor.Context) {
		switch m := c.Message().(type) {
		case error:
			panic(m)
		case string:
			panic(m)
		}
	}
	decider := func(err error) actor.Directive {
		if errors.Is(err, errSupervisionEvent) {
			return actor.ResumeDirective
		}
		var pe *actor.PanicError
		if errors.As(err, &pe) && pe.Value == "escalate" {
			return actor.EscalateDirective
		}
		return actor.RestartDirective
	}
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.OneForOne(1, time.Minute, decider)))
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.SupervisionEvent]())

	pid := sys.Root().Spawn(actor.PropsFromFunc(boom))
	sys.Root().Send(pid, errSupervisionEvent)
	ev := testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.True(t, ev.Child.Equal(pid))
	require.NotNil(t, ev.Supervisor)
	require.False(t, ev.Supervisor.Equal(pid))
	require.ErrorIs(t, ev.Err, errSupervisionEvent)
	require.Equal(t, actor.ResumeDirective, ev.Directive)
	require.Equal(t, 1, ev.Consecutive)

	sys.Root().Send(pid, "restart")
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.Equal(t, actor.RestartDirective, ev.Directive)
	var pe *actor.PanicError
	require.ErrorAs(t, ev.Err, &pe)
	require.Equal(t, "restart", pe.Value)

	// A second restart within the window is over the limit of one: Stop.
	sys.Root().Send(pid, "restart")
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.Equal(t, actor.StopDirective, ev.Directive)

	// Escalate from a top-level actor: its guardian stops it.
	pid = sys.Root().Spawn(actor.PropsFromFunc(boom))
	sys.Root().Send(pid, "escalate")
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.True(t, ev.Child.Equal(pid))
	require.Equal(t, actor.StopDirective, ev.Directive)

	// Escalate from a child: the parent's decision says Escalate, and the
	// parent's own failure is the guardian's next event.
	var child *actor.PID
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			child = c.Spawn(actor.PropsFromFunc(boom))
		}
	}, actor.WithSupervisor(actor.OneForOne(5, time.Minute, decider))))
	sys.RunUntilIdle()
	sys.Root().Send(child, "escalate")
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.True(t, ev.Child.Equal(child))
	require.True(t, ev.Supervisor.Equal(parent))
	require.Equal(t, actor.EscalateDirective, ev.Directive)
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.True(t, ev.Child.Equal(parent))

	// ExponentialBackoff: a delayed restart, After set.
	var kid *actor.PID
	sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			kid = c.Spawn(actor.PropsFromFunc(boom))
		}
	}, actor.WithSupervisor(actor.ExponentialBackoff())))
	sys.RunUntilIdle()
	sys.Root().Send(kid, "again")
	ev = testkit.ExpectEvent[*actor.SupervisionEvent](events, time.Second)
	require.Equal(t, actor.RestartDirective, ev.Directive)
	require.Equal(t, 100*time.Millisecond, ev.After)
	events.ExpectNoEvent(0)
}

// A strategy that does nothing about the failed child publishes nothing.
type ignoreStrategy struct{}

func (ignoreStrategy) HandleFailure(actor.Supervisor, actor.Failure) {}

func TestSupervisionEventNotPublishedWithoutADecision(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(ignoreStrategy{}))
	events := testkit.NewEventProbe(t, sys.System, testkit.OfType[*actor.SupervisionEvent]())
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			panic("ignored")
		}
	}))
	sys.Root().Send(pid, "x")
	sys.RunUntilIdle()
	events.ExpectNoEvent(0)
}
