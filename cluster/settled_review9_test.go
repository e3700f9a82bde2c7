package cluster_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// TestReview9SettledIsNotStaleWhenTheViewMoves: Settled must not report a
// view as settled before this member's placement actor has even installed
// it. The Cluster's view (Topology, and the TopologyChanged event) moves on
// the membership goroutine; the settled flag is kept by the placement
// actor, which installs the view later (viewMsg). Here the placement actors
// of a and b are held in a grain producer (user code, run inside Spawn on
// the placement actor's goroutine) while c leaves: a and b then report a
// view of two members that neither has installed nor acknowledged, and
// Settled still says true (the flag of the three-member view). testkit's
// AwaitConverged (same view everywhere, Settled everywhere) returns then.
func TestReview9SettledIsNotStaleWhenTheViewMoves(t *testing.T) {
	reg := fastRegistry(t)
	ctx := ctxWait(t)
	gate := make(chan struct{})
	var gateOnce sync.Once
	release := func() { gateOnce.Do(func() { close(gate) }) }
	// stallKind holds the spawning placement actor (until release) on the
	// members that block, once entered says so.
	stallKind := func(block bool, entered chan<- struct{}) cluster.Kind {
		return cluster.NewKind("stall", actor.PropsFromProducer(func() actor.Actor {
			if block {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-gate
			}
			return actor.ReceiveFunc(func(c actor.Context) {
				if _, ok := c.Message().(*Get); ok {
					c.Respond(&Total{})
				}
			})
		}))
	}
	enteredA, enteredB := make(chan struct{}, 1), make(chan struct{}, 1)
	a := startMemberWith(t, reg, fastTiming, counterKind(), stallKind(true, enteredA))
	b := startMemberWith(t, reg, fastTiming, counterKind(), stallKind(true, enteredB))
	c := startMemberWith(t, reg, fastTiming, counterKind(), stallKind(false, nil))
	t.Cleanup(release) // before the members' shutdowns (cleanups run last first)
	awaitMembers(t, 3, a, b, c)
	settled := func(n node) bool { return n.c.Settled() }
	for _, n := range []node{a, b, c} {
		awaitTrue(t, ctx, n, func() bool { return settled(n) }, "the three-member view settles")
	}

	// Hold a's and b's placement actors in the producer of a grain each
	// owns.
	reqCtx, cancelReqs := context.WithCancel(context.Background())
	var reqs sync.WaitGroup
	t.Cleanup(func() { release(); cancelReqs(); reqs.Wait() })
	for i := range 60 {
		reqs.Add(1)
		go func() {
			defer reqs.Done()
			_, _ = cluster.Request[*Total](reqCtx, c.c, cluster.NewIdentity("stall", fmt.Sprint(i)), &Get{})
		}()
	}
	for _, ch := range []chan struct{}{enteredA, enteredB} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("the placement actors of a and b were not held")
		}
	}

	// c leaves; a and b see it (the membership goroutine) while their
	// placement actors are held.
	require.NoError(t, c.c.Shutdown(ctx))
	awaitMembers(t, 2, a, b)
	for _, n := range []node{a, b} {
		topo, _ := n.c.Topology()
		require.Len(t, topo.Members, 2)
		assert.False(t, n.c.Settled(),
			"%s: Settled for a view of epoch %d its placement actor has not installed, which no member has acknowledged",
			n.sys.Address(), topo.Epoch)
	}

	// Released, the view settles (the test itself is sound).
	release()
	for _, n := range []node{a, b} {
		awaitTrue(t, ctx, n, func() bool {
			topo, _ := n.c.Topology()
			return settled(n) && len(topo.Members) == 2
		}, "the two-member view settles once the placement actors run")
	}
}

// awaitTrue waits for cond on member n, looking again at each of its
// ViewSettled and TopologyChanged events.
func awaitTrue(t *testing.T, ctx context.Context, n node, cond func() bool, what string) {
	t.Helper()
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	es := n.sys.EventStream()
	s1 := actor.Subscribe(es, func(*cluster.ViewSettled) { notify() })
	s2 := actor.Subscribe(es, func(*cluster.TopologyChanged) { notify() })
	defer es.Unsubscribe(s1)
	defer es.Unsubscribe(s2)
	for !cond() {
		select {
		case <-wake:
		case <-ctx.Done():
			t.Fatalf("%s: %s: not within the wait", n.sys.Address(), what)
		}
	}
}
