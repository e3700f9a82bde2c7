package testkit_test

import (
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestDiffIdleSparesWaitingGrain: a grain waiting for a ReenterAfter
// continuation (its call to a gate grain that holds it) is not passivated
// for idleness while it waits, however long, on both sides; once the call
// is answered its continuation runs, and it passivates at its idle
// timeout after that. In the cluster a control grain of the same idle
// timeout, called after the waiting grain's last message, passivates
// first: a tick that found the waiting grain idle would have stopped it
// no later. Before, NewGrain counted only messages and passivated the
// waiting grain, dropping its continuation.
func TestDiffIdleSparesWaitingGrain(t *testing.T) {
	const idle = 2 * time.Second
	a, b := cluster.NewIdentity("diff", "a"), cluster.NewIdentity("gate", "b")
	call := &dCall{To: b, S: "x", Timeout: time.Hour}
	waiting := func(l []string) bool { return count(l, "a stopping") == 0 }

	kj := newJournal()
	g := testkit.NewGrain(t, diffKind(kj, diffConf{kind: "diff", idle: idle}), a)
	gate := g.StubProbe("gate")
	g.Tell(call)
	gc, _ := testkit.ExpectGrainCall[*dNote](gate, 0)
	g.Sys.Advance(3 * idle)
	kitWaiting := kj.snapshot()
	gc.Reply("ok x")
	g.Sys.RunUntilIdle()
	g.Sys.Advance(idle)
	kit := kj.snapshot()

	rj, gj, cj := newJournal(), newJournal(), newJournal()
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime(), testkit.Serializers(gateMessages),
		testkit.Kinds(diffKind(rj, diffConf{kind: "diff", idle: idle}), gateKind(gj), diffKind(cj, diffConf{kind: "ctl", idle: idle})),
		testkit.ConfigureCluster(func(c *cluster.Config) {
			// The gate holds the call for longer than the default
			// timeouts: no attempt is retried, no call times out.
			c.RequestTimeout, c.AttemptTimeout = time.Hour, time.Hour
		}))
	c := tc.Node(0)
	c.Send(a, call)
	gj.waitFor(t, 10*time.Second, "the gate holds the call", func(l []string) bool { return count(l, "gate holds x") == 1 })
	f := c.RequestFuture(cluster.NewIdentity("ctl", "c"), &dNote{S: "c"}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the control grain answers")
	tc.Eventually(func() bool { return count(cj.snapshot(), "c stopped") == 1 }, 3*idle, "the control grain passivates")
	realWaiting := rj.snapshot()
	released := tc.Now()
	c.Send(b, &dRelease{})
	tc.Eventually(func() bool { return count(rj.snapshot(), "a stopped") == 1 }, 3*idle, "the grain passivates")
	real := rj.snapshot()
	// Its idle clock started when the continuation ran, after the release
	// (the cluster passivates on its tick, so up to a tick or two later).
	if d := tc.Now().Sub(released); d < idle || d > 2*idle {
		t.Fatalf("cluster: passivated %v after the call was answered, want its idle timeout %v (and a tick or two)", d, idle)
	}

	if !waiting(kitWaiting) || !waiting(realWaiting) {
		t.Fatalf("passivated while it waited:\nNewGrain:%s\ncluster:%s", lines(kitWaiting), lines(realWaiting))
	}
	requireSame(t, "the grain's journal while it waits", kitWaiting, realWaiting)
	requireSame(t, "the grain's journal", kit, real)
}
