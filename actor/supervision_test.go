package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

type getCount struct{}
type spawnChild struct{}

// counter reports lifecycle to probe and counts msgN; its state is lost on restart.
func counterProps(probe *testkit.Probe) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Started:
				c.Send(probe.PID(), "started")
			case *actor.Restarting:
				c.Send(probe.PID(), "restarting")
			case *actor.Stopped:
				c.Send(probe.PID(), "stopped:"+c.Self().ID)
			case *msgN:
				n++
			case *getCount:
				c.Respond(n)
			case *boom:
				panic("boom")
			case *spawnChild:
				c.Respond(c.Spawn(counterProps(probe)))
			}
		})
	})
}

func directive(d actor.Directive) actor.SupervisorStrategy {
	return actor.OneForOne(10, time.Minute, func(error) actor.Directive { return d })
}

// A panicking actor is restarted: Restarting, then Started on a fresh instance.
func TestPanickingActorRestarted(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &msgN{})
	sys.Root().Send(pid, &msgN{})
	sys.Root().Send(pid, &boom{})
	probe.ExpectMsgEqual("restarting", 0)
	probe.ExpectMsgEqual("started", 0)
	n, err := actor.Request[int](t.Context(), sys.Root(), pid, &getCount{})
	require.NoError(t, err)
	assert.Equal(t, 0, n, "fresh instance after restart")
}

func TestDirectiveResumeKeepsState(t *testing.T) {
	sys := testkit.NewSystem(t, testkit.WithGuardianStrategy(directive(actor.ResumeDirective)))
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &msgN{})
	sys.Root().Send(pid, &boom{})
	sys.Root().Send(pid, &msgN{})
	n, err := actor.Request[int](t.Context(), sys.Root(), pid, &getCount{})
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	probe.ExpectNoMsg(20 * time.Millisecond)
}

func TestDirectiveStop(t *testing.T) {
	sys := testkit.NewSystem(t, testkit.WithGuardianStrategy(directive(actor.StopDirective)))
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	probe.Watch(pid)
	sys.Root().Send(pid, &boom{})
	probe.ExpectMsgEqual("stopped:"+pid.ID, 0)
	probe.ExpectTerminated(pid, 0)
}

// Escalate: the child's failure fails its parent, whose supervisor (the
// guardian, restarting) restarts the parent, which stops its children.
func TestDirectiveEscalate(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Restarting:
			c.Send(probe.PID(), "parent restarting")
		case *spawnChild:
			c.Respond(c.Spawn(counterProps(probe)))
		}
	}, actor.WithSupervisor(directive(actor.EscalateDirective))))
	child, err := actor.Request[*actor.PID](t.Context(), sys.Root(), parent, &spawnChild{})
	require.NoError(t, err)
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(child, &boom{})
	probe.ExpectMsgEqual("parent restarting", 0)
	probe.ExpectMsgEqual("stopped:"+child.ID, 0)
}

// AllForOne restarts the siblings of the failed child too.
func TestAllForOne(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	parent := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*spawnChild); ok {
			c.Respond(c.Spawn(counterProps(probe)))
		}
	}, actor.WithSupervisor(actor.AllForOne(10, time.Minute, nil))))
	a, _ := actor.Request[*actor.PID](t.Context(), sys.Root(), parent, &spawnChild{})
	b, _ := actor.Request[*actor.PID](t.Context(), sys.Root(), parent, &spawnChild{})
	probe.ExpectMsgEqual("started", 0)
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(b, &msgN{})
	// b has counted the message before a fails: a restart is a system
	// message, which goes ahead of b's queued messages, so without this
	// the message could be counted by the restarted b.
	n, err := actor.Request[int](t.Context(), sys.Root(), b, &getCount{})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	sys.Root().Send(a, &boom{})
	got := map[string]int{}
	for i := 0; i < 4; i++ {
		got[testkit.ExpectMsg[string](probe, 0)]++
	}
	assert.Equal(t, map[string]int{"restarting": 2, "started": 2}, got)
	n, err = actor.Request[int](t.Context(), sys.Root(), b, &getCount{})
	require.NoError(t, err)
	assert.Equal(t, 0, n, "the sibling was restarted as well")
}

// OneForOne stops a child that failed more than maxRestarts times in the window.
func TestOneForOneGivesUp(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.OneForOne(2, time.Minute, nil)))
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	probe.Watch(pid)
	for i := 0; i < 2; i++ {
		sys.Root().Send(pid, &boom{})
		probe.ExpectMsgEqual("restarting", 0)
		probe.ExpectMsgEqual("started", 0)
	}
	sys.Root().Send(pid, &boom{})
	probe.ExpectMsgEqual("stopped:"+pid.ID, 0)
	probe.ExpectTerminated(pid, 0)
}

// ExponentialBackoff (S6): the restart waits 100 ms, then 200 ms for the
// next consecutive failure, on the virtual clock.
func TestExponentialBackoffRestart(t *testing.T) {
	sys := testkit.NewManualSystem(t, testkit.WithGuardianStrategy(actor.ExponentialBackoff()))
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &boom{})
	probe.ExpectNoMsg(0)
	sys.Advance(99 * time.Millisecond)
	probe.ExpectNoMsg(0)
	sys.Advance(time.Millisecond)
	probe.ExpectMsgEqual("restarting", 0)
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &boom{}) // second consecutive failure
	sys.Advance(199 * time.Millisecond)
	probe.ExpectNoMsg(0)
	sys.Advance(time.Millisecond)
	probe.ExpectMsgEqual("restarting", 0)
	probe.ExpectMsgEqual("started", 0)
}

// Restarting an actor stops its children first.
func TestRestartStopsChildren(t *testing.T) {
	sys := testkit.NewSystem(t)
	probe := testkit.NewProbe(t, sys)
	pid := sys.Root().Spawn(counterProps(probe))
	probe.ExpectMsgEqual("started", 0)
	child, err := actor.Request[*actor.PID](t.Context(), sys.Root(), pid, &spawnChild{})
	require.NoError(t, err)
	probe.ExpectMsgEqual("started", 0)
	sys.Root().Send(pid, &boom{})
	probe.ExpectMsgEqual("restarting", 0)
	probe.ExpectMsgEqual("stopped:"+child.ID, 0)
	probe.ExpectMsgEqual("started", 0)
}
