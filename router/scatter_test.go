package router_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	query   struct{}
	release struct{}
)

// answerer answers a query with name, at once or, when held, only after
// a release.
func answerer(name string, held bool) *actor.Props {
	var waiting []*actor.PID
	return actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *query:
			if !held {
				c.Respond(name)
				return
			}
			waiting = append(waiting, c.Sender())
		case *release:
			for _, w := range waiting {
				c.Send(w, name)
			}
			waiting = nil
		}
	})
}

func TestScatterGatherPassesOnTheFirstAnswerOnly(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	slow1 := ms.Root().Spawn(answerer("slow1", true))
	fast := ms.Root().Spawn(answerer("fast", false))
	slow2 := ms.Root().Spawn(answerer("slow2", true))
	r, err := router.SpawnGroup(ms.Root(), router.ScatterGatherFirstCompleted(time.Second), []*actor.PID{slow1, fast, slow2})
	require.NoError(t, err)

	p.Send(r, &query{})
	p.ExpectMsgEqual("fast", time.Millisecond)
	assert.True(t, p.Sender().Equal(fast), "the answer comes from the routee that gave it")

	dead := ms.DeadLetters()
	ms.Root().Send(slow1, &release{})
	ms.Root().Send(slow2, &release{})
	ms.RunUntilIdle()
	p.ExpectNoMsg(2 * time.Second) // past the timeout too: nothing more
	assert.Equal(t, dead, ms.DeadLetters(), "later answers are dropped, not dead letters")
}

func TestScatterGatherTimesOut(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	a := ms.Root().Spawn(answerer("a", true))
	b := ms.Root().Spawn(answerer("b", true))
	r, err := router.SpawnGroup(ms.Root(), router.ScatterGatherFirstCompleted(100*time.Millisecond), []*actor.PID{a, b})
	require.NoError(t, err)
	f := ms.Root().RequestFuture(r, &query{}, 0)
	ms.Advance(99 * time.Millisecond)
	select {
	case <-f.Done():
		t.Fatal("completed before the timeout")
	default:
	}
	ms.Advance(time.Millisecond)
	assert.ErrorIs(t, f.Wait(), actor.ErrTimeout)
	// An answer after the timeout goes nowhere.
	ms.Root().Send(a, &release{})
	ms.RunUntilIdle()
}

// A routee on another node that is gone answers with a
// DeadLetterResponse (its node sends it back to the collector); when every
// routee has, the request fails at once instead of at the timeout.
func TestScatterGatherFailsWhenEveryRouteeIsGone(t *testing.T) {
	sys := testkit.NewSystem(t)
	gone := actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*query); ok {
			c.Respond(&actor.DeadLetterResponse{Target: c.Self()})
		}
	})
	r, err := router.SpawnGroup(sys.Root(), router.ScatterGatherFirstCompleted(time.Minute),
		[]*actor.PID{sys.Root().Spawn(gone), sys.Root().Spawn(gone)})
	require.NoError(t, err)
	_, err = actor.Request[string](t.Context(), sys.Root(), r, &query{})
	assert.ErrorIs(t, err, router.ErrAllRouteesFailed)
}

func TestScatterGatherFailsWhenRouterStops(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	a := ms.Root().Spawn(answerer("a", true))
	r, err := router.SpawnGroup(ms.Root(), router.ScatterGatherFirstCompleted(time.Minute), []*actor.PID{a})
	require.NoError(t, err)
	f := ms.Root().RequestFuture(r, &query{}, 0)
	ms.RunUntilIdle()
	require.NoError(t, awaitStop(ms, r))
	assert.ErrorIs(t, f.Wait(), router.ErrStopped)
}

func TestScatterGatherTimeoutMustBePositive(t *testing.T) {
	sys := testkit.NewSystem(t)
	_, err := router.SpawnGroup(sys.Root(), router.ScatterGatherFirstCompleted(0), nil)
	assert.ErrorIs(t, err, router.ErrInvalidConfig)
	_, err = router.SpawnPool(sys.Root(), nil, 1, router.RoundRobin())
	assert.ErrorIs(t, err, router.ErrInvalidConfig)
}

// TestScatterGatherStopFailsWaitingRequestsInOrder: the requests a
// stopping router fails are failed in the order they were routed, so a
// deterministic system (testkit.NewManualSystem) runs alike run after run;
// they were failed in the order of a map.
func TestScatterGatherStopFailsWaitingRequestsInOrder(t *testing.T) {
	for round := range 5 {
		ms := testkit.NewManualSystem(t)
		held := ms.Root().Spawn(answerer("held", true))
		r, err := router.SpawnGroup(ms.Root(), router.ScatterGatherFirstCompleted(time.Hour), []*actor.PID{held})
		require.NoError(t, err)
		ep := testkit.NewEventProbe(t, ms.System, testkit.OfType[*actor.DeadLetterEvent]())
		var want []*actor.PID
		for range 12 {
			p := testkit.NewManualProbe(t, ms)
			p.Send(r, &query{})
			want = append(want, p.PID())
		}
		ms.RunUntilIdle()
		ms.Root().Stop(r)
		for i, w := range want {
			dl := testkit.ExpectEvent[*actor.DeadLetterEvent](ep, 0)
			require.ErrorIs(t, dl.Reason, router.ErrStopped)
			require.True(t, dl.Sender.Equal(w), "round %d: request %d failed out of order (%s, want %s)", round, i, dl.Sender, w)
		}
	}
}
