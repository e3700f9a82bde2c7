package testkit_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// memCounter keeps its total in memory only, and records its lifecycle.
func memCounter(log *[]string, opts ...cluster.KindOption) cluster.Kind {
	return cluster.NewKind("mem", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			tok, _ := cluster.FencingTokenOf(c)
			switch m := c.Message().(type) {
			case *actor.Started:
				*log = append(*log, fmt.Sprintf("started %d", tok.Seq))
			case *actor.Stopping:
				*log = append(*log, fmt.Sprintf("stopping %d", tok.Seq))
			case *addReq:
				n += m.N
				c.Respond(&total{N: n})
			case *getReq:
				cluster.Passivate(c)
			}
		})
	}), opts...)
}

// An activation that receives no message for its kind's idle timeout is
// passivated when the virtual clock gets there; each message restarts the
// wait; the next message starts a new activation, as in the cluster.
func TestGrainIdlePassivationAndReactivationOnMessage(t *testing.T) {
	var log []string
	g := testkit.NewGrain(t, memCounter(&log, cluster.WithIdleTimeout(time.Minute)), cluster.NewIdentity("mem", "a"))
	require.Equal(t, 1, testkit.RequestGrain[*total](g, &addReq{N: 1}).N)
	g.Sys.Advance(59 * time.Second)
	require.Equal(t, 2, testkit.RequestGrain[*total](g, &addReq{N: 1}).N, "59 s idle: still the same activation")
	g.Sys.Advance(59 * time.Second)
	require.Equal(t, []string{"started 1"}, log, "the wait restarted at the last message")
	g.Sys.Advance(time.Second)
	require.Equal(t, []string{"started 1", "stopping 1"}, log, "a minute without a message")
	require.Equal(t, uint64(1), g.Token.Seq)

	require.Equal(t, 1, testkit.RequestGrain[*total](g, &addReq{N: 1}).N, "a new activation: memory state is gone")
	require.Equal(t, uint64(2), g.Token.Seq)
	require.Equal(t, []string{"started 1", "stopping 1", "started 2"}, log)

	// Passivate from inside the grain: the next message reactivates too.
	g.Send(&getReq{})
	require.Equal(t, 1, testkit.RequestGrain[*total](g, &addReq{N: 1}).N)
	require.Equal(t, uint64(3), g.Token.Seq)
	require.Equal(t, []string{"started 1", "stopping 1", "started 2", "stopping 2", "started 3"}, log)
}

// Without WithIdleTimeout a kind passivates after the cluster's default
// idle timeout, an hour; with a negative one, never.
func TestGrainIdleTimeoutDefaultAndNever(t *testing.T) {
	var log []string
	g := testkit.NewGrain(t, memCounter(&log), cluster.NewIdentity("mem", "a"))
	g.Sys.Advance(time.Hour - time.Second)
	require.Equal(t, []string{"started 1"}, log)
	g.Sys.Advance(time.Second)
	require.Equal(t, []string{"started 1", "stopping 1"}, log)

	var never []string
	g = testkit.NewGrain(t, memCounter(&never, cluster.WithIdleTimeout(-1)), cluster.NewIdentity("mem", "b"))
	g.Sys.Advance(1000 * time.Hour)
	require.Equal(t, []string{"started 1"}, never)
	_, pending := g.Sys.Clock.NextDeadline()
	require.False(t, pending, "no idle check is waiting")
}

// A grain whose Started panics is an activation that failed: the caller
// gets what it would get in the cluster, a *cluster.ActivationFailedError
// carrying the panic; a later message tries a new activation.
func TestGrainActivationFailureReported(t *testing.T) {
	broken := true
	kind := cluster.NewKind("flaky", actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			if broken {
				panic("cannot load its state")
			}
		case *whoReq:
			c.Respond(&whereIs{Member: "here"})
		}
	}))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("flaky", "a"))
	err := g.ActivationError()
	require.ErrorIs(t, err, cluster.ErrActivationFailed)
	var afe *cluster.ActivationFailedError
	require.ErrorAs(t, err, &afe)
	require.Equal(t, g.Identity, afe.Key)
	// As in the cluster, where the owner answers with the failure's text:
	// the panic is in the message, not an *actor.PanicError to unwrap.
	var pe *actor.PanicError
	require.False(t, errors.As(err, &pe), "the cluster's caller gets no *actor.PanicError")
	require.Contains(t, err.Error(), "cannot load its state")

	_, err = testkit.CallGrain[*whereIs](g, &whoReq{})
	require.ErrorIs(t, err, cluster.ErrActivationFailed, "a second activation, failing too")
	require.Equal(t, uint64(2), g.Token.Seq)

	rec := newRecorder(t)
	bad := testkit.NewGrain(rec, kind, cluster.NewIdentity("flaky", "b"))
	testkit.RequestGrain[*whereIs](bad, &whoReq{})
	require.Len(t, rec.Fatals(), 1)
	require.Contains(t, rec.Fatals()[0], "cannot load its state")

	broken = false
	got, err := testkit.CallGrain[*whereIs](g, &whoReq{})
	require.NoError(t, err)
	require.Equal(t, "here", got.Member)
	require.NoError(t, g.ActivationError())
	require.Equal(t, uint64(3), g.Token.Seq)
}

// An activation that passivated before its idle check came leaves no check
// running beside the next activation's (every activation has the same
// PID): the next one is passivated once, as in the cluster, not poisoned a
// second time into a dead letter.
func TestGrainIdleCheckOfStoppedActivationEnds(t *testing.T) {
	var log []string
	g := testkit.NewGrain(t, memCounter(&log, cluster.WithIdleTimeout(time.Minute)), cluster.NewIdentity("mem", "a"))
	g.Sys.Advance(10 * time.Second)
	g.Send(&getReq{}) // passivates itself; its idle check is due at 1m
	g.Sys.Advance(10 * time.Second)
	require.Equal(t, 1, testkit.RequestGrain[*total](g, &addReq{N: 1}).N) // activation 2, idle at 1m20s
	g.Sys.Advance(2 * time.Minute)
	require.Equal(t, []string{"started 1", "stopping 1", "started 2", "stopping 2"}, log)
	require.Zero(t, g.Sys.DeadLetters(), "activation 2 was poisoned once")
}

// NewGrain fails the test, without a panic, on what a cluster refuses: a
// kind without a name or props, an invalid identity, an identity of
// another kind.
func TestNewGrainRefusesBadInput(t *testing.T) {
	var log []string
	good := memCounter(&log)
	for _, tc := range []struct {
		name string
		kind cluster.Kind
		id   cluster.Identity
		want error
	}{
		{"zero kind", cluster.Kind{}, cluster.NewIdentity("mem", "a"), cluster.ErrInvalidConfig},
		{"nil props", cluster.NewKind("mem", nil), cluster.NewIdentity("mem", "a"), cluster.ErrInvalidConfig},
		{"zero identity", good, cluster.Identity{}, cluster.ErrInvalidIdentity},
		{"another kind", good, cluster.NewIdentity("other", "a"), cluster.ErrInvalidIdentity},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := newRecorder(t)
			require.Nil(t, testkit.NewGrain(rec, tc.kind, tc.id))
			require.Len(t, rec.Fatals(), 1)
			require.Contains(t, rec.Fatals()[0], tc.want.Error())
		})
	}
}
