package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// first waits for the first event of type T on sys published after the
// call (the subscription is made before the action that publishes it).
func first[T any](t testing.TB, sys *actor.System, pred func(T) bool) func() T {
	t.Helper()
	ch := make(chan T, 64)
	sub := actor.Subscribe(sys.EventStream(), func(ev T) {
		if pred == nil || pred(ev) {
			select {
			case ch <- ev:
			default:
			}
		}
	})
	return func() T {
		t.Helper()
		defer sys.EventStream().Unsubscribe(sub)
		select {
		case ev := <-ch:
			return ev
		case <-time.After(wait):
			var zero T
			t.Fatalf("no %T", zero)
			return zero
		}
	}
}

func collect(t testing.TB, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func withMeter(r *sdkmetric.ManualReader) func(*actor.SystemConfig) {
	return func(c *actor.SystemConfig) { c.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(r)) }
}

// B1.4: a disabled config installs nothing and leaves the system as it is.
func TestClusterDisabledInstallsNothing(t *testing.T) {
	reg := newRegistry(t)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName = "127.0.0.1:0", "shop"
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg),
			cluster.Install(cluster.Config{Name: "shop", Provider: reg, Disabled: true})}
	})
	require.Nil(t, cluster.Get(sys))
	require.Empty(t, reg.Topology().Members, "nothing joined the registry")
}

// B1.5: readiness is queryable and every change is published.
func TestClusterStatusQueryableAndPublished(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	require.Equal(t, cluster.StatusReady, a.c.Status())
	leaving := first(t, a.sys, func(ev *cluster.ClusterStatusChanged) bool { return ev.To == cluster.StatusLeaving })
	stopped := first(t, a.sys, func(ev *cluster.ClusterStatusChanged) bool { return ev.To == cluster.StatusStopped })
	require.NoError(t, a.c.Shutdown(ctxWait(t)))
	require.Equal(t, cluster.StatusReady, leaving().From)
	require.Equal(t, cluster.StatusLeaving, stopped().From)
	require.Equal(t, cluster.StatusStopped, a.c.Status())
}

// B3.1, V2.1, V4.1: the owner's placement actor activates the grain and
// publishes ActivationStarted with its token. B3.3, V2.3, V4.2: when the
// activation terminates its lease is gone, the PidCache entry is dropped on
// every member and ActivationTerminated reaches every member's EventStream.
// L6, V1.5: the lookup's PidCache is the one cache, and its view is the
// runtime's.
func TestClusterActivationLifecycleEvents(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	topo, _ := a.c.Topology()
	partition, ok := a.c.IdentityLookup().(*cluster.PartitionIdentityLookup) // L1: the default lookup
	require.True(t, ok)
	require.Equal(t, topo.Hash, partition.Topology().Hash, "V1.5: the lookup holds the runtime's view")
	require.Same(t, partition.Cache(), a.c.PidCache(), "L6: one cache")
	ctx := ctxWait(t)
	var id cluster.Identity
	for i := 0; ; i++ {
		id = cluster.NewIdentity("counter", fmt.Sprint("life-", i))
		started := first(t, b.sys, func(ev *cluster.ActivationStarted) bool { return ev.Identity == id })
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		if who.Member == b.sys.Address() {
			ev := started()
			require.Equal(t, b.c.Self().Key(), ev.Member)
			require.False(t, ev.Token.IsZero())
			break
		}
	}
	pid, ok := a.c.PidCache().Get(id, time.Now())
	require.True(t, ok, "L6: the request cached the PID in the lookup's PidCache")
	require.Equal(t, b.sys.Address(), pid.Address)
	onA := first(t, a.sys, func(ev *cluster.ActivationTerminated) bool { return ev.Identity == id })
	onB := first(t, b.sys, func(ev *cluster.ActivationTerminated) bool { return ev.Identity == id })
	_, err := cluster.Request[*Total](ctx, a.c, id, &Sleep{})
	require.NoError(t, err)
	require.Equal(t, b.c.Self().Key(), onB().Member)
	require.Equal(t, b.c.Self().Key(), onA().Member, "V4.2: forwarded to every member")
	_, ok = a.c.PidCache().Get(id, time.Now())
	require.False(t, ok, "the cached PID is invalidated on the caller's member")
	require.Zero(t, b.c.ActiveCount(), "the lease is gone")
	// The next request activates it again, with a greater token.
	started := first(t, b.sys, func(ev *cluster.ActivationStarted) bool { return ev.Identity == id })
	tot, err := cluster.Request[*Total](ctx, a.c, id, &Get{})
	require.NoError(t, err)
	require.Zero(t, tot.N, "a new activation")
	require.NotZero(t, started().Token.Seq)
}

// B4.2, V3.2, V3.4, V4.5: an owner that never answers: the request fails
// with ErrTimeout after Retry.MaxAttempts, RetryThrottled names the
// identity, and the retry metric counts by kind (never by identity).
func TestClusterRetriesExhausted(t *testing.T) {
	reg := newRegistry(t)
	reader := sdkmetric.NewManualReader()
	tune := func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 3, Base: time.Millisecond, Max: 5 * time.Millisecond}
		c.ActivationTimeout = 100 * time.Millisecond
	}
	a := startMemberFull(t, reg, tune, withMeter(reader)) // client only
	b := startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	// b's transport goes away; its membership stays: activation requests
	// to it get no answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = remote.Get(b.sys).Node().Close(ctx)

	id := cluster.NewIdentity("counter", "unreachable")
	throttled := first(t, a.sys, func(ev *cluster.RetryThrottled) bool { return ev.Identity == id })
	_, err := cluster.Request[*Total](ctxWait(t), a.c, id, &Get{})
	require.ErrorIs(t, err, cluster.ErrTimeout)
	ev := throttled()
	require.Equal(t, 3, ev.Attempts)
	m := collect(t, reader)["fraktor.cluster.request.retries"]
	sum, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "the retry counter exists")
	require.Len(t, sum.DataPoints, 1)
	require.EqualValues(t, 2, sum.DataPoints[0].Value)
	kind, _ := sum.DataPoints[0].Attributes.Value("kind")
	require.Equal(t, "counter", kind.AsString())
	require.Equal(t, 1, sum.DataPoints[0].Attributes.Len(), "labelled by kind only")
}

// V3.3: the caller's deadline is honoured even when the grain never
// answers (RequestTimeout is far longer).
func TestClusterRequestHonoursDeadline(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", "quiet"), &Silent{})
	require.ErrorIs(t, err, cluster.ErrTimeout)
	require.Less(t, time.Since(start), 3*time.Second)
	require.True(t, errors.Is(err, actor.ErrTimeout) || errors.Is(err, context.DeadlineExceeded))
}

// B4.3, B4.5, V4.3: the virtual-actor gauge reflects the activations per
// kind; successful requests record resolve and request durations.
func TestClusterMetrics(t *testing.T) {
	reg := newRegistry(t)
	reader := sdkmetric.NewManualReader()
	a := startMemberFull(t, reg, func(*cluster.Config) {}, withMeter(reader), counterKind())
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	for i := range 7 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Add{N: 1})
		require.NoError(t, err)
	}
	ms := collect(t, reader)
	g, ok := ms["fraktor.cluster.virtual_actors"].Data.(metricdata.Gauge[int64])
	require.True(t, ok)
	require.Len(t, g.DataPoints, 1)
	require.EqualValues(t, 7, g.DataPoints[0].Value)
	for _, name := range []string{"fraktor.cluster.resolve.duration", "fraktor.cluster.request.duration"} {
		h, ok := ms[name].Data.(metricdata.Histogram[float64])
		require.True(t, ok, name)
		require.Len(t, h.DataPoints, 1, name)
		require.NotZero(t, h.DataPoints[0].Count, name)
	}
	act, ok := ms["fraktor.cluster.activations"].Data.(metricdata.Sum[int64])
	require.True(t, ok)
	require.EqualValues(t, 7, act.DataPoints[0].Value)
}

// countingLookup is a user's IdentityLookup: the partition lookup behind a
// counter of resolutions.
type countingLookup struct {
	*cluster.PartitionIdentityLookup
	gets   atomic.Int64
	reuses atomic.Int64
}

func (l *countingLookup) ReuseEventBuffers(es []cluster.VirtualActorEvent, ces []cluster.PidCacheEvent) {
	l.reuses.Add(1)
	l.PartitionIdentityLookup.ReuseEventBuffers(es, ces)
}

func (l *countingLookup) Get(id cluster.Identity, now time.Time) (*actor.PID, error) {
	l.gets.Add(1)
	return l.PartitionIdentityLookup.Get(id, now)
}

// Seed 000's with_identity_lookup: a custom IdentityLookup given in Config
// resolves identities with the runtime's Activator; one activation per
// identity still holds, and PIDs found stale are removed from it.
func TestClusterCustomIdentityLookup(t *testing.T) {
	reg := newRegistry(t)
	var lookups []*countingLookup
	var mu sync.Mutex
	custom := func(c *cluster.Config) {
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			if err != nil {
				return nil, err
			}
			l := &countingLookup{PartitionIdentityLookup: p}
			mu.Lock()
			lookups = append(lookups, l)
			mu.Unlock()
			return l, nil
		}
	}
	a := startMemberWith(t, reg, custom, counterKind())
	b := startMemberWith(t, reg, custom, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	where := map[cluster.Identity]string{}
	for i := range 20 {
		id := cluster.NewIdentity("counter", fmt.Sprint(i))
		for _, from := range []node{a, b} {
			who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
			require.NoError(t, err)
			if w, ok := where[id]; ok {
				require.Equal(t, w, who.Member, "one activation per identity")
			}
			where[id] = who.Member
		}
	}
	require.Equal(t, 20, a.c.ActiveCount()+b.c.ActiveCount())
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, lookups, 2)
	for _, l := range lookups {
		require.NotZero(t, l.gets.Load(), "the runtime resolved through the custom lookup")
		require.NotZero(t, l.reuses.Load(), "the runtime hands the drained event buffers back")
	}
}

// L6: a grain hosted on the caller's own member costs no PidCache entry:
// callers there route through the member's table of its activations, and
// the route ends with the activation (a passivated grain is activated
// again, with a greater token).
func TestClusterLocalGrainHasNoPidCacheEntry(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	const n = 50
	for i := range n {
		id := cluster.NewIdentity("counter", fmt.Sprint("local-", i))
		for range 3 {
			_, err := cluster.Request[*Total](ctx, a.c, id, &Add{N: 1})
			require.NoError(t, err)
		}
		tot, err := cluster.Request[*Total](ctx, a.c, id, &Get{})
		require.NoError(t, err)
		require.Equal(t, 3, tot.N, "one activation took every message")
	}
	require.Equal(t, n, a.c.ActiveCount())
	require.Zero(t, a.c.PidCache().Len(), "local grains are routed without PidCache entries")

	id := cluster.NewIdentity("counter", "local-0")
	stopped := first(t, a.sys, func(ev *cluster.ActivationTerminated) bool { return ev.Identity == id })
	_, err := cluster.Request[*Total](ctx, a.c, id, &Sleep{})
	require.NoError(t, err)
	stopped()
	tot, err := cluster.Request[*Total](ctx, a.c, id, &Get{})
	require.NoError(t, err)
	require.Zero(t, tot.N, "the route ended with the activation: a new one")
	require.Zero(t, a.c.PidCache().Len())
}
