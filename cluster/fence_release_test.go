package cluster_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// releaseRegistry is fastRegistry with a lease TTL far above the fence
// period: an incarnation that stopped renewing stays registered for 5 s,
// as a Consul session outlives its holder's fence by up to 2×TTL.
func releaseRegistry(t testing.TB) *cluster.MemoryRegistry {
	reg, err := cluster.NewMemoryRegistry(cluster.MemoryConfig{LeaseTTL: 5 * time.Second,
		RenewInterval: 100 * time.Millisecond, FencePeriod: 400 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return reg
}

func releaseTiming(c *cluster.Config) {
	fastTiming(c)
	c.RequestTimeout = time.Minute
	c.Retry = cluster.DefaultRetryPolicy()
	c.Retry.MaxAttempts, c.Retry.Max = 10000, 100*time.Millisecond
}

// fenceWatch reports a member's fences and its rejoins (Fenced → Ready).
type fenceWatch struct{ fenced, readied chan struct{} }

func watchFences(nd node) fenceWatch {
	w := fenceWatch{fenced: make(chan struct{}, 1), readied: make(chan struct{}, 1)}
	actor.Subscribe(nd.sys.EventStream(), func(*cluster.Fenced) {
		select {
		case w.fenced <- struct{}{}:
		default:
		}
	})
	actor.Subscribe(nd.sys.EventStream(), func(e *cluster.ClusterStatusChanged) {
		if e.From == cluster.StatusFenced && e.To == cluster.StatusReady {
			select {
			case w.readied <- struct{}{}:
			default:
			}
		}
	})
	return w
}

func receiveWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatal(what)
	}
}

// awaitReleased waits, on the observer membership obs, for the released
// markers of every key in keys, and fails once limit has passed.
func awaitReleased(t *testing.T, obs cluster.Membership, keys []string, limit time.Duration) {
	t.Helper()
	released := func() bool {
		rel := obs.Released()
		for _, k := range keys {
			if !slices.ContainsFunc(rel, func(m cluster.Member) bool { return m.Key() == k }) {
				return false
			}
		}
		return true
	}
	deadline := time.After(limit)
	for !released() {
		select {
		case _, ok := <-obs.Snapshots():
			require.True(t, ok, "observer membership ended")
		case <-deadline:
			t.Fatalf("no released marker of %v %v after the registry was reachable again (released: %v)", keys, limit, obs.Released())
		}
	}
}

// The in-memory counterpart of TestClusterServesSoonAfterRegistryOutage
// (cluster/consul): both members are cut off from the registry for longer
// than F − S, fence (every grain stops) and rejoin as new incarnations. Once
// the registry is reachable again, the old incarnations, which hold
// nothing, are released (released marker, removed from the registry) and
// the grains answer again without waiting the old incarnations out. Before,
// they were stopped as a crash ends a membership: the registry kept them
// until their lease TTL ran out (5 s here), each still owned its share of
// the identities, and the barrier then waited W for it.
func TestClusterFencedIncarnationsReleasedAfterRegistryCut(t *testing.T) {
	reg := releaseRegistry(t)
	a := startMemberWith(t, reg, releaseTiming, counterKind())
	b := startMemberWith(t, reg, releaseTiming, counterKind())
	awaitMembers(t, 2, a, b)
	obsCtx, obsCancel := context.WithTimeout(context.Background(), wait)
	defer obsCancel()
	obs, err := reg.Join(obsCtx, cluster.Member{ID: "observer", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { _ = obs.Leave(context.Background()) }()
	awaitMembers(t, 3, a, b)
	watch := newObserver(a, b)

	ctx := ctxWait(t)
	ids := make([]cluster.Identity, 20)
	for i := range ids {
		ids[i] = cluster.NewIdentity("counter", fmt.Sprint(i))
		_, err := cluster.Request[*Total](ctx, a.c, ids[i], &Add{N: 1})
		require.NoError(t, err)
	}
	require.NotZero(t, a.c.ActiveCount())
	require.NotZero(t, b.c.ActiveCount())

	fa, fb := watchFences(a), watchFences(b)
	oldA, oldB := a.c.Self().Key(), b.c.Self().Key()
	reg.Partition(oldA)
	reg.Partition(oldB)
	receiveWithin(t, fa.fenced, "a did not fence")
	receiveWithin(t, fb.fenced, "b did not fence")
	// The rejoins register new keys, which the partition does not cut.
	receiveWithin(t, fa.readied, "a did not rejoin")
	receiveWithin(t, fb.readied, "b did not rejoin")
	require.NotEqual(t, oldA, a.c.Self().Key())
	require.NotEqual(t, oldB, b.c.Self().Key())
	reg.Heal(oldA)
	reg.Heal(oldB)
	healed := time.Now()

	// Without the release the old entries stay until their TTL (about
	// 4.7 s from here) and carry no marker ever.
	awaitReleased(t, obs, []string{oldA, oldB}, 3*time.Second)
	for _, m := range reg.Topology().Members {
		require.NotContains(t, []string{oldA, oldB}, m.Key(), "a released incarnation is still registered")
	}
	for _, id := range ids {
		_, err := cluster.Request[*Total](ctx, b.c, id, &Get{})
		require.NoError(t, err, id)
	}
	served := time.Since(healed)
	t.Logf("every grain answered %v after the registry was reachable again", served)
	require.Less(t, served, 4*time.Second, "the old incarnations were waited out")
	watch.assertNoOverlap(t)
}

// notifyHandler is a slog handler that signals (without blocking) on every
// record with msg.
type notifyHandler struct {
	msg string
	ch  chan struct{}
}

func (h notifyHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h notifyHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h notifyHandler) WithGroup(string) slog.Handler            { return h }
func (h notifyHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.ch <- struct{}{}:
		default:
		}
	}
	return nil
}

// Shutdown ends the release of a fenced incarnation that the registry does
// not let through (its key still partitioned): Shutdown returns without
// error within its ctx, the retrying goroutine ends (goleak), and the old
// incarnation is left to expire, as before the release existed; the
// rejoined incarnation leaves with its own marker.
func TestClusterShutdownEndsPendingFenceRelease(t *testing.T) {
	reg := releaseRegistry(t)
	failing := make(chan struct{}, 1)
	a := startMemberFull(t, reg, releaseTiming, func(c *actor.SystemConfig) {
		c.Logger = slog.New(notifyHandler{msg: "cluster: releasing the fenced incarnation failed; retrying", ch: failing})
	}, counterKind())
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", "1"), &Add{N: 1})
	require.NoError(t, err)

	fa := watchFences(a)
	old := a.c.Self().Key()
	reg.Partition(old)
	receiveWithin(t, fa.fenced, "a did not fence")
	receiveWithin(t, failing, "a did not try to release its fenced incarnation")
	receiveWithin(t, fa.readied, "a did not rejoin")
	next := a.c.Self().Key()

	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, a.c.Shutdown(sctx))
	select {
	case <-a.c.Terminated():
	default:
		t.Fatal("Shutdown returned nil before the cluster's goroutines ended")
	}
	var left []string
	for _, m := range reg.Topology().Members {
		left = append(left, m.Key())
	}
	require.Equal(t, []string{old}, left, "the partitioned old incarnation stays until its TTL; the rejoined one %s left", next)
}

// A fence whose grain does not stop (its Receive does not return) releases
// nothing while the grain runs: the released marker would let another
// member activate the identity beside it. Once the grain returns and
// terminates, the fenced incarnation is released. The member is evicted, so
// the registry stays reachable and only the running grain holds the
// release back.
func TestClusterFenceReleasesOnlyOnceGrainsTerminated(t *testing.T) {
	reg := releaseRegistry(t)
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	stuck := cluster.NewKind("stuck", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Silent); ok {
			entered <- struct{}{}
			<-unblock
		}
	}))
	a := startMemberWith(t, reg, releaseTiming, stuck)
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	t.Cleanup(release) // before the system's shutdown, should the test fail early
	awaitMembers(t, 1, a)
	obsCtx, obsCancel := context.WithTimeout(context.Background(), wait)
	defer obsCancel()
	obs, err := reg.Join(obsCtx, cluster.Member{ID: "observer", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { _ = obs.Leave(context.Background()) }()
	awaitMembers(t, 2, a)

	id := cluster.NewIdentity("stuck", "1")
	terminated := make(chan struct{}, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ActivationTerminated) {
		if ev.Identity == id && ev.PID.Address == a.sys.Address() {
			terminated <- struct{}{}
		}
	})
	_ = a.c.RequestFuture(id, &Silent{}, time.Minute)
	receiveWithin(t, entered, "the grain did not receive its message")

	fa := watchFences(a)
	old := a.c.Self()
	require.NoError(t, reg.Evict(obsCtx, old))
	receiveWithin(t, fa.fenced, "a did not fence")
	require.Equal(t, 1, a.c.ActiveCount(), "the grain still runs")
	require.Empty(t, obs.Released(), "released while a grain of the incarnation ran")
	require.Equal(t, cluster.StatusFenced, a.c.Status())

	release()
	receiveWithin(t, terminated, "the grain did not terminate")
	awaitReleased(t, obs, []string{old.Key()}, wait)
	receiveWithin(t, fa.readied, "a did not rejoin")
}

// A member told to shut down while fenced (its rejoin failing, its old
// incarnation's release waiting out a long backoff) makes one last attempt
// to release that incarnation within Shutdown's ctx: with the registry
// reachable again, the others need not wait it out. Before, Shutdown left
// nothing behind in the registry's eyes: the incarnation had been stopped
// as a crash's is, and stayed registered until its lease TTL (5 s here).
func TestClusterShutdownWhileFencedReleasesTheFencedIncarnation(t *testing.T) {
	reg := releaseRegistry(t)
	gate := &joinGate{Provider: reg}
	failing := make(chan struct{}, 1)
	a := startMemberFull(t, gate, func(c *cluster.Config) {
		releaseTiming(c)
		c.Retry.Base, c.Retry.Max = time.Minute, time.Minute // no retry before the Shutdown below
	}, func(c *actor.SystemConfig) {
		c.Logger = slog.New(notifyHandler{msg: "cluster: releasing the fenced incarnation failed; retrying", ch: failing})
	}, counterKind())
	awaitMembers(t, 1, a)
	obsCtx, obsCancel := context.WithTimeout(context.Background(), wait)
	defer obsCancel()
	obs, err := reg.Join(obsCtx, cluster.Member{ID: "observer", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { _ = obs.Leave(context.Background()) }()
	awaitMembers(t, 2, a)
	ctx := ctxWait(t)
	_, err = cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", "1"), &Add{N: 1})
	require.NoError(t, err)

	fa := watchFences(a)
	old := a.c.Self().Key()
	gate.closed.Store(true)
	reg.Partition(old)
	receiveWithin(t, fa.fenced, "a did not fence")
	receiveWithin(t, failing, "a did not try to release its fenced incarnation")
	reg.Heal(old)

	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	require.NoError(t, a.c.Shutdown(sctx))
	require.Contains(t, keysOf(obs.Released()), old, "the fenced incarnation was not released at shutdown")
	require.NotContains(t, keysOf(reg.Topology().Members), old)
}

func keysOf(ms []cluster.Member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Key()
	}
	return out
}
