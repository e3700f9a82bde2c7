package testkit_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// stopAfterSelfCall is a grain that, told to, asks itself for a pong
// with a future piped to its caller and stops at once, before it takes
// the request (a stop overtakes the messages queued); told silent, it
// asks itself something it never answers, the future piped likewise.
type stopAfterSelfCall struct{ fail, stopAtStart *bool }

type (
	askThenStop         struct{}
	askThenStopFailNext struct{} // and the next activation fails to start
	askSilent           struct{}
	silentReq           struct{}
	askThenStopAlways   struct{} // and every activation after stops in Started
)

func (s *stopAfterSelfCall) Receive(ctx actor.Context) {
	c := cluster.Get(ctx.System())
	me, _ := cluster.IdentityOf(ctx)
	switch ctx.Message().(type) {
	case *actor.Started:
		if *s.fail {
			*s.fail = false
			panic("activation fails")
		}
		if *s.stopAtStart {
			ctx.Stop(ctx.Self())
		}
	case askThenStopAlways:
		*s.stopAtStart = true
		c.RequestFuture(me, selfPing{}, time.Second).PipeTo(ctx.Sender())
		ctx.Stop(ctx.Self())
	case askThenStop:
		c.RequestFuture(me, selfPing{}, time.Second).PipeTo(ctx.Sender())
		ctx.Stop(ctx.Self())
	case askThenStopFailNext:
		*s.fail = true
		c.RequestFuture(me, selfPing{}, time.Second).PipeTo(ctx.Sender())
		ctx.Stop(ctx.Self())
	case askSilent:
		c.RequestFuture(me, silentReq{}, time.Second).PipeTo(ctx.Sender())
	case selfPing:
		ctx.Respond("pong")
	}
}

func newStopAfterSelfCall(t testing.TB) *testkit.Grain {
	fail, stop := false, false
	kind := cluster.NewKind("stopper", actor.PropsFromProducer(func() actor.Actor { return &stopAfterSelfCall{fail: &fail, stopAtStart: &stop} }))
	return testkit.NewGrain(t, kind, cluster.NewIdentity("stopper", "s"))
}

// A future self-call whose activation stops before it takes the request
// is answered by the identity's next activation, as in the cluster (the
// attempt is told of the dead letter and the request is sent again, which
// activates the grain), and its relay then ends. Before, the relay was
// never told (only a future sender hears of a dead letter): the call
// failed with ErrTimeout at its timeout and the relay stayed until the
// system stopped.
func TestGrainSelfCallToStoppedActivationReactivates(t *testing.T) {
	g := newStopAfterSelfCall(t)
	base := g.Sys.ProcessCount()
	g.Send(askThenStop{})
	assert.Equal(t, "pong", testkit.ExpectMsg[string](g.Probe, 0))
	assert.Equal(t, cluster.FencingToken{Epoch: 1, Seq: 2}, g.Token, "answered by the next activation")
	assert.Equal(t, base, g.Sys.ProcessCount(), "the relay ended with its call")
}

// The next activation that the self-call starts fails to start: the call
// fails with the *cluster.ActivationFailedError a caller in the cluster
// gets, and its relay ends.
func TestGrainSelfCallToStoppedActivationFailingStart(t *testing.T) {
	g := newStopAfterSelfCall(t)
	base := g.Sys.ProcessCount()
	g.Send(askThenStopFailNext{})
	err := testkit.ExpectMsg[error](g.Probe, 0)
	var afe *cluster.ActivationFailedError
	require.True(t, errors.As(err, &afe), "got %v", err)
	assert.ErrorIs(t, err, cluster.ErrActivationFailed)
	assert.Equal(t, base-1, g.Sys.ProcessCount(), "the relay ended with its call (and the failed activation is gone)")
}

// A self-call whose request the activation took and never answers fails
// with ErrTimeout at its timeout, as in the cluster; its relay ends when
// that activation ends, which can answer it no more. Before, it stayed
// until the system stopped.
func TestGrainSelfCallRelayEndsWithActivation(t *testing.T) {
	g := newStopAfterSelfCall(t)
	base := g.Sys.ProcessCount()
	g.Send(askSilent{})
	g.Sys.Advance(time.Second)
	err := testkit.ExpectMsg[error](g.Probe, 0)
	assert.ErrorIs(t, err, cluster.ErrTimeout)
	g.Reactivate()
	assert.Equal(t, base, g.Sys.ProcessCount(), "the relay ended with the activation")
}

// Activations that each stop before they take the request: the relay
// sends it again as often as the cluster's default retry policy attempts
// a request, then the call fails with ErrTimeout and the relay ends.
func TestGrainSelfCallNeverTakenGivesUp(t *testing.T) {
	g := newStopAfterSelfCall(t)
	base := g.Sys.ProcessCount()
	g.Send(askThenStopAlways{})
	err := testkit.ExpectMsg[error](g.Probe, 0)
	assert.ErrorIs(t, err, cluster.ErrTimeout)
	attempts := cluster.DefaultRetryPolicy().MaxAttempts
	assert.Contains(t, err.Error(), fmt.Sprintf("each activation stopped before it took the request (%d attempts)", attempts))
	assert.Equal(t, uint64(attempts), g.Token.Seq, "one activation per attempt")
	assert.Equal(t, base-1, g.Sys.ProcessCount(), "the relay ended with its call (and the last activation stopped)")
}
