package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// gatedMember starts a member whose custom lookup fails every Get of
// "counter/cold…" (failingLookup) after reporting it on entered and taking
// a token from gate; get, when not nil, answers those Gets instead.
type gatedMember struct {
	node
	reader         *sdkmetric.ManualReader
	gets           *atomic.Int32
	entered, gate  chan struct{}
	throttledEvent chan *cluster.RetryThrottled
}

func startGated(t *testing.T, tune func(*cluster.Config), get func(n int32) (*actor.PID, error)) *gatedMember {
	t.Helper()
	g := &gatedMember{reader: sdkmetric.NewManualReader(), gets: new(atomic.Int32),
		entered: make(chan struct{}), gate: make(chan struct{}), throttledEvent: make(chan *cluster.RetryThrottled, 16)}
	g.node = startMemberFull(t, newRegistry(t), func(c *cluster.Config) {
		tune(c)
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			l := failingLookup{p, g.gets, g.entered, g.gate}
			if get == nil {
				return l, err
			}
			return answeringLookup{l, get}, err
		}
	}, withMeter(g.reader), counterKind())
	awaitMembers(t, 1, g.node)
	t.Cleanup(func() { close(g.gate) }) // before Shutdown: no Get stays held
	sub := actor.Subscribe(g.sys.EventStream(), func(e *cluster.RetryThrottled) { g.throttledEvent <- e })
	t.Cleanup(func() { g.sys.EventStream().Unsubscribe(sub) })
	return g
}

// answeringLookup is a failingLookup whose gated Gets answer get(n), n
// counting them from 1.
type answeringLookup struct {
	failingLookup
	get func(n int32) (*actor.PID, error)
}

func (l answeringLookup) Get(id cluster.Identity, now time.Time) (*actor.PID, error) {
	if _, err := l.failingLookup.Get(id, now); err != errColdRefused {
		return nil, err
	}
	return l.get(l.gets.Load())
}

// step waits for the next gated Get to begin.
func (g *gatedMember) step(t *testing.T, what string) {
	t.Helper()
	select {
	case <-g.entered:
	case <-time.After(wait):
		t.Fatalf("no Get: %s", what)
	}
}

func (g *gatedMember) retries(t *testing.T) int64 {
	t.Helper()
	sum, ok := collect(t, g.reader)["fraktor.cluster.request.retries"].Data.(metricdata.Sum[int64])
	if !ok || len(sum.DataPoints) == 0 {
		return 0
	}
	return sum.DataPoints[0].Value
}

// throttled returns the next RetryThrottled event.
func (g *gatedMember) throttled(t *testing.T) *cluster.RetryThrottled {
	t.Helper()
	select {
	case e := <-g.throttledEvent:
		return e
	case <-time.After(wait):
		t.Fatal("no RetryThrottled")
		return nil
	}
}

// A blocking Request that waits on a resolution led for a Send (which
// retries by itself) counts each of that resolution's tries as one of its
// attempts: MaxAttempts in all, not the flight's MaxAttempts as one
// attempt and MaxAttempts-1 of its own.
func TestClusterRequestWaitingOnSendsCountsItsAttempts(t *testing.T) {
	g := startGated(t, func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}
	}, nil)
	waiting := make(chan struct{}, 1)
	cluster.OnFlightWait(g.c, func(cluster.Identity) { waiting <- struct{}{} })
	id := cluster.NewIdentity("counter", "cold")

	g.c.Send(id, &Add{N: 1})
	g.step(t, "the Send's first resolution")
	res := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, err := cluster.Request[*Total](ctx, g.c, id, &Get{})
		res <- err
	}()
	<-waiting // the Request waits on the Send's resolution
	g.gate <- struct{}{}
	g.step(t, "the Send's second resolution")
	g.gate <- struct{}{}
	g.step(t, "the Send's third resolution")
	g.gate <- struct{}{}
	select {
	case err := <-res:
		require.ErrorIs(t, err, cluster.ErrTimeout)
		require.ErrorIs(t, err, errColdRefused)
		require.Contains(t, err.Error(), "3 attempts")
	case <-g.entered:
		t.Fatal("a fourth resolution: the Request counted the Send's three as one attempt")
	}
	require.Equal(t, int32(3), g.gets.Load())
	require.EqualValues(t, 2, g.retries(t), "the Request's attempts after its first")
	// One RetryThrottled for the Send's resolution, one for the Request.
	for range 2 {
		e := g.throttled(t)
		require.Equal(t, id, e.Identity)
		require.Equal(t, 3, e.Attempts)
	}
}

// A RequestFuture queued on a blocking Request's resolution that fails
// moves on to a new resolution, which retries for it: the failed
// resolution was its first attempt, so it makes MaxAttempts in all, and
// the new resolution, left with nothing queued, stops.
func TestClusterQueuedRequestMovedOnCountsFirstResolution(t *testing.T) {
	g := startGated(t, func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 3, Base: time.Millisecond, Max: 2 * time.Millisecond}
	}, nil)
	id := cluster.NewIdentity("counter", "cold")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res := make(chan error, 1)
	go func() {
		_, err := cluster.Request[*Total](ctx, g.c, id, &Get{})
		res <- err
	}()
	g.step(t, "the Request's resolution")
	f := g.c.RequestFuture(id, &Get{}, wait) // queued on it
	cancel()                                 // the Request makes no other attempt
	g.gate <- struct{}{}
	require.ErrorIs(t, <-res, cluster.ErrTimeout)
	g.step(t, "the RequestFuture's second attempt")
	g.gate <- struct{}{}
	g.step(t, "the RequestFuture's third attempt")
	g.gate <- struct{}{}
	select {
	case <-f.Done():
	case <-g.entered:
		t.Fatal("a fourth resolution: the Request's failed resolution was not counted")
	}
	_, err := f.Result()
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.Contains(t, err.Error(), "3 attempts")
	require.Equal(t, int32(3), g.gets.Load())
	require.EqualValues(t, 2, g.retries(t))
	e := g.throttled(t)
	require.Equal(t, id, e.Identity)
	require.Equal(t, 3, e.Attempts)
}

// A RequestFuture whose first resolution answered with a grain that is
// gone moves on to a new resolution; when its attempts are used up there,
// it reports RetryThrottled, although that resolution, led for it alone,
// did not use up its own (it would then have ended at its
// RequestTimeout, long before its next try).
func TestClusterRequestAfterGoneGrainReportsThrottled(t *testing.T) {
	gone := actor.NewPID("127.0.0.1:1", "counter/cold-gone")
	g := startGated(t, func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 2, Base: time.Hour, Max: time.Hour}
		c.RequestTimeout = 200 * time.Millisecond
	}, func(n int32) (*actor.PID, error) {
		if n == 1 {
			return gone, nil
		}
		return nil, errColdRefused
	})
	id := cluster.NewIdentity("counter", "cold")

	f := g.c.RequestFuture(id, &Get{}, wait)
	g.step(t, "the first resolution")
	cluster.MarkGone(g.c, id, gone)
	g.gate <- struct{}{}
	g.step(t, "the second resolution")
	g.gate <- struct{}{}
	_, err := f.Result()
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.Contains(t, err.Error(), "2 attempts")
	require.Equal(t, int32(2), g.gets.Load())
	e := g.throttled(t)
	require.Equal(t, id, e.Identity)
	require.Equal(t, 2, e.Attempts)
	require.EqualValues(t, 1, g.retries(t))
}
