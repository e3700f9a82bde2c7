package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// A grain's receive-timeout tick that is still in its mailbox when it stops
// is the runtime's own, for that activation: it is not a Send to forward
// (forwarded, it counts as one, activates the identity again when nothing
// else is waiting for it, and cannot be encoded for another member). Here
// the tick is posted, on a manual clock, while the grain is blocked before
// it stops itself.
func TestClusterReceiveTimeoutTickNotForwarded(t *testing.T) {
	clock, reg := manualRegistry(t)
	reader := sdkmetric.NewManualReader()
	ticked := make(chan struct{}, 1)
	kind := cluster.NewKind("timed", actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.SetReceiveTimeout(time.Second)
		case *actor.ReceiveTimeout:
			ticked <- struct{}{}
		case *stopNow:
			close(m.blocked)
			<-m.release
			c.Stop(c.Self())
		case *WhoAmI:
			c.Respond(&Identity{Member: c.Self().Address})
		}
	}))
	nd := startMemberFull(t, reg, func(*cluster.Config) {}, func(c *actor.SystemConfig) {
		withMeter(reader)(c)
		c.Clock = clock
	}, kind)
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("timed", "t")
	_, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{})
	require.NoError(t, err)
	ended := make(chan struct{}, 1)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *cluster.ActivationTerminated) {
		if e.Identity == id {
			ended <- struct{}{}
		}
	})
	defer nd.sys.EventStream().Unsubscribe(sub)

	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	nd.c.Send(id, stop)
	<-stop.blocked
	clock.Advance(time.Second) // the timer fires: its tick is queued behind stopNow
	close(stop.release)
	select {
	case <-ended: // after the grain's mailbox drained
	case <-time.After(wait):
		t.Fatal("the grain never stopped")
	}
	select {
	case <-ticked:
		t.Fatal("the stopping grain handled its tick")
	default:
	}
	var forwards int64
	if fw, ok := collect(t, reader)["fraktor.cluster.forwards"].Data.(metricdata.Sum[int64]); ok {
		for _, p := range fw.DataPoints {
			forwards += p.Value
		}
	}
	assert.Zero(t, forwards, "the grain's own receive-timeout tick was forwarded")
}
