package testkit_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// storedCounter keeps its total in a FencedStore: it claims its token when
// it starts and writes before it replies.
func storedCounter(store *testkit.FencedStore[int]) cluster.Kind {
	return cluster.NewKind("stored", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			id, _ := cluster.IdentityOf(c)
			tok, _ := cluster.FencingTokenOf(c)
			switch m := c.Message().(type) {
			case *actor.Started:
				if err := store.Claim(id, tok); err != nil {
					c.Stop(c.Self())
					return
				}
				n, _ = store.Load(id)
			case *addReq:
				if err := store.Write(id, tok, n+m.N); err != nil {
					return // superseded: no reply
				}
				n += m.N
				c.Respond(&total{N: n})
			case *whoReq:
				c.Respond(&whereIs{Member: fmt.Sprintf("%s %v", id, tok)})
			case *getReq:
				cluster.Passivate(c)
			}
		})
	}))
}

func TestNewGrainIdentityTokenAndReactivation(t *testing.T) {
	store := testkit.NewFencedStore[int](nil)
	id := cluster.NewIdentity("stored", "a")
	g := testkit.NewGrain(t, storedCounter(store), id)
	require.Equal(t, "stored/a 1.1", testkit.RequestGrain[*whereIs](g, &whoReq{}).Member)
	require.Equal(t, 2, testkit.RequestGrain[*total](g, &addReq{N: 2}).N)
	old := g.Token
	g.Reactivate()
	require.True(t, old.Less(g.Token))
	require.Equal(t, 5, testkit.RequestGrain[*total](g, &addReq{N: 3}).N, "state reloaded from the store")

	// A write under the old token is refused.
	err := store.Write(id, old, 100)
	require.ErrorIs(t, err, testkit.ErrStaleToken)
	var stale *testkit.StaleTokenError
	require.ErrorAs(t, err, &stale)
	require.Equal(t, g.Token, stale.Highest)
	require.Equal(t, 1, store.Refused())

	// Passivate stops the standalone activation.
	g.Probe.Watch(g.PID)
	g.Send(&getReq{})
	g.Probe.ExpectTerminated(g.PID, 0)
}

func TestIdentityOfOrdinaryActorIsFalse(t *testing.T) {
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			_, ok := cluster.IdentityOf(c)
			c.Respond(ok)
		}
	}))
	probe.Send(pid, "?")
	require.False(t, testkit.ExpectMsg[bool](probe, 0))
}

// TestReactivateKeepsRepliesNotYetTaken: Reactivate works whatever the
// probe holds; a reply the test has not taken yet stays in g.Probe.
func TestReactivateKeepsRepliesNotYetTaken(t *testing.T) {
	rec := newRecorder(t)
	store := testkit.NewFencedStore[int](nil)
	g := testkit.NewGrain(rec, storedCounter(store), cluster.NewIdentity("stored", "b"))
	g.Send(&addReq{N: 2}) // the reply waits in g.Probe
	g.Reactivate()
	require.Empty(t, rec.Fatals())
	require.Equal(t, 2, testkit.ExpectMsg[*total](g.Probe, 0).N, "the reply sent before Reactivate")
	require.Equal(t, 5, testkit.RequestGrain[*total](g, &addReq{N: 3}).N)
	require.Empty(t, rec.Fatals())
}

// TestGrainFailingItsStartedIsStopped: as in the cluster (V2.2), a grain
// whose Started handler panics is an activation that failed: it is
// stopped, not restarted. A failure after Started returned restarts it.
func TestGrainFailingItsStartedIsStopped(t *testing.T) {
	starts := 0
	kind := cluster.NewKind("boom", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			starts++
			panic("cannot load its state")
		}
	}))
	g := testkit.NewGrain(t, kind, cluster.NewIdentity("boom", "a"))
	g.Probe.Watch(g.PID)
	g.Probe.ExpectTerminated(g.PID, time.Minute)
	require.Equal(t, 1, starts, "the failed activation ran Started once")

	starts = 0
	fails := true
	kind = cluster.NewKind("later", actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			starts++
		case *whoReq:
			if fails {
				fails = false
				panic("a bug")
			}
			c.Respond(&whereIs{Member: "here"})
		}
	}))
	g = testkit.NewGrain(t, kind, cluster.NewIdentity("later", "a"))
	g.Send(&whoReq{})
	g.Sys.Advance(time.Second) // past the restart backoff
	require.Equal(t, "here", testkit.RequestGrain[*whereIs](g, &whoReq{}).Member)
	require.Equal(t, 2, starts, "restarted once")
}
