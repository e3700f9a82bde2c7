package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	timerTick  struct{}
	timerHello struct{}
	timerQuiet struct{}
)

// A grain's own timer ticks are messages it receives, so they count as
// activity for its kind's idle timeout: a grain whose periodic timer is
// shorter than the timeout is never passivated for idleness, and is once
// it cancels the timer (docs/cluster.md, Kinds). Without ticks counting,
// the grain would stop after the idle timeout and its ticks with it.
func TestGrainTimerTicksCountAsActivity(t *testing.T) {
	const idle, period = 60 * time.Millisecond, 10 * time.Millisecond
	ticks := make(chan struct{}, 1024)
	stopping := make(chan struct{}, 1)
	kind := cluster.NewKind("ticker", actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Started:
			c.Timers().StartPeriodic("tick", period, &timerTick{})
		case *timerTick:
			ticks <- struct{}{}
		case *timerHello:
			c.Respond(&timerHello{})
		case *timerQuiet:
			c.Timers().Cancel("tick")
			c.Respond(&timerQuiet{})
		case *actor.Stopping:
			stopping <- struct{}{}
		}
	}), cluster.WithIdleTimeout(idle))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	id := cluster.NewIdentity("ticker", "a")
	_, err := testkit.Request[*timerHello](ctx, tc.Node(0), id, &timerHello{}) // activates it
	require.NoError(t, err)
	for n := range 5 * int(idle/period) { // five idle timeouts' worth of ticks
		select {
		case <-ticks:
		case <-stopping:
			t.Fatalf("passivated after %d ticks, with its timer running", n)
		case <-ctx.Done():
			t.Fatalf("only %d ticks", n)
		}
	}
	_, err = testkit.Request[*timerQuiet](ctx, tc.Node(0), id, &timerQuiet{})
	require.NoError(t, err)
	select {
	case <-stopping: // passivated once its timer is cancelled
	case <-ctx.Done():
		t.Fatal("not passivated after its timer was cancelled")
	}
}
