package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// fastTiming: leases of 600 ms so failover tests take about a second.
func fastRegistry(t testing.TB) *cluster.MemoryRegistry {
	reg, err := cluster.NewMemoryRegistry(cluster.MemoryConfig{LeaseTTL: 600 * time.Millisecond,
		RenewInterval: 100 * time.Millisecond, FencePeriod: 400 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return reg
}

func fastTiming(c *cluster.Config) {
	c.StopBudget = 100 * time.Millisecond
	c.MaxPause = 100 * time.Millisecond
	c.TickInterval = 20 * time.Millisecond
	c.ActivationTimeout = 300 * time.Millisecond
	c.AttemptTimeout = 500 * time.Millisecond
}

// observer records every activation's interval from all members' events,
// stamped with one clock, and checks that no identity ran on two members at
// once.
type observer struct {
	mu     sync.Mutex
	open   map[cluster.Identity][]span
	closed []span
	starts map[cluster.Identity][]span
}

type span struct {
	member     string
	token      cluster.FencingToken
	start, end time.Time
}

func newObserver(nodes ...node) *observer {
	o := &observer{open: map[cluster.Identity][]span{}, starts: map[cluster.Identity][]span{}}
	for _, nd := range nodes {
		o.watch(nd)
	}
	return o
}

func (o *observer) watch(nd node) {
	// One subscription for both types keeps the order the placement actor
	// published them in (an end before its successor's start).
	nd.sys.EventStream().SubscribeWithPredicate(func(e any) {
		o.mu.Lock()
		defer o.mu.Unlock()
		switch ev := e.(type) {
		case *cluster.ActivationStarted:
			s := span{member: ev.Member, token: ev.Token, start: time.Now()}
			o.open[ev.Identity] = append(o.open[ev.Identity], s)
			o.starts[ev.Identity] = append(o.starts[ev.Identity], s)
		case *cluster.ActivationTerminated:
			if ev.PID.Address != nd.sys.Address() {
				return // a broadcast from another member: recorded there
			}
			spans := o.open[ev.Identity]
			for i, s := range spans {
				if s.member == ev.Member && s.token == ev.Token {
					s.end = time.Now()
					o.closed = append(o.closed, s)
					o.open[ev.Identity] = append(spans[:i:i], spans[i+1:]...)
					return
				}
			}
		}
	}, func(e any) bool {
		switch e.(type) {
		case *cluster.ActivationStarted, *cluster.ActivationTerminated:
			return true
		}
		return false
	})
}

// assertNoOverlap fails when two activations of one identity were open at
// the same time.
func (o *observer) assertNoOverlap(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	for id, ss := range o.open {
		if len(ss) > 1 {
			t.Errorf("identity %s active on %d members at once: %+v", id, len(ss), ss)
		}
	}
}

// V2.4, B2.1: a member joins: identities move to it, their old owners stop
// them and acknowledge the view, requests keep succeeding, no identity ever
// runs twice.
func TestClusterOwnerChangeOnJoin(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	obs := newObserver(a, b)
	ctx := ctxWait(t)
	ids := make([]cluster.Identity, 60)
	for i := range ids {
		ids[i] = cluster.NewIdentity("counter", fmt.Sprint(i))
		_, err := cluster.Request[*Total](ctx, a.c, ids[i], &Add{N: 1})
		require.NoError(t, err)
	}
	c := startMember(t, reg, counterKind())
	obs.watch(c)
	awaitMembers(t, 3, a, b, c)
	onC := 0
	for _, id := range ids {
		for _, from := range []node{a, b, c} {
			who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
			require.NoError(t, err)
			if who.Member == c.sys.Address() {
				onC++
			}
		}
	}
	require.NotZero(t, onC, "some identities moved to the new member")
	obs.assertNoOverlap(t)
}

// A member stopped abruptly (its transport closed, its membership cut off,
// no leave): its grains are activated elsewhere only once it has been gone
// from the view for the wait-out W, never before; requests then succeed.
func TestClusterAbruptStopWaitsOut(t *testing.T) {
	reg := fastRegistry(t)
	gate := &joinGate{Provider: reg}
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, gate, fastTiming, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	onB := identitiesOn(t, ctx, a, b, 5, 200)
	require.NotEmpty(t, onB)

	gone := make(chan time.Time, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		if len(ev.Members) == 1 {
			select {
			case gone <- time.Now():
			default:
			}
		}
	})
	started := make(chan time.Time, len(onB))
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ActivationStarted) { started <- time.Now() })

	// Crash b: its connections drop, it can no longer renew, and it cannot
	// join again (a dead process does not).
	gate.closed.Store(true)
	reg.Partition(b.c.Self().Key())
	crashCtx, cancel := contextCancelled()
	cancel()
	_ = remote.Get(b.sys).Node().Close(crashCtx)

	for _, id := range onB {
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, a.sys.Address(), who.Member)
	}
	var goneAt time.Time
	select {
	case goneAt = <-gone:
	case <-time.After(wait):
		t.Fatal("b never left a's view")
	}
	w := 613 * time.Millisecond // W for F 400 ms, S 100 ms, P 100 ms, ρ 0.01 (612.1 ms, rounded up)
	for range onB {
		at := <-started
		require.False(t, at.Before(goneAt.Add(w)), "reactivated %v after b left the view, before W", at.Sub(goneAt))
	}
}

// Self-fence: a member cut off from the registry stops its grains before
// its lease deadline, publishes Fenced, and rejoins as a new incarnation.
func TestClusterSelfFenceAndRejoin(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 2, a, b)
	obs := newObserver(a, b)
	ctx := ctxWait(t)
	for i := range 30 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Add{N: 1})
		require.NoError(t, err)
	}
	require.NotZero(t, b.c.ActiveCount())
	fenced := make(chan *cluster.Fenced, 1)
	actor.Subscribe(b.sys.EventStream(), func(ev *cluster.Fenced) { fenced <- ev })
	ready := make(chan *cluster.ClusterStatusChanged, 4)
	actor.Subscribe(b.sys.EventStream(), func(ev *cluster.ClusterStatusChanged) {
		if ev.To == cluster.StatusReady {
			ready <- ev
		}
	})
	oldKey := b.c.Self().Key()
	reg.Partition(oldKey)
	select {
	case ev := <-fenced:
		require.Equal(t, oldKey, ev.Member)
	case <-time.After(wait):
		t.Fatal("b never fenced")
	}
	select {
	case <-ready:
	case <-time.After(wait):
		t.Fatal("b never became ready again")
	}
	require.NotEqual(t, oldKey, b.c.Self().Key(), "rejoined as a new incarnation")
	for i := range 30 {
		_, err := cluster.Request[*Total](ctx, b.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Get{})
		require.NoError(t, err)
	}
	obs.assertNoOverlap(t)
}

func contextCancelled() (context.Context, context.CancelFunc) {
	return context.WithCancel(context.Background())
}

// joinGate is a provider whose Join fails once closed: a member behind it
// that loses its membership cannot come back, as a crashed process cannot.
type joinGate struct {
	cluster.Provider
	closed atomic.Bool
}

func (g *joinGate) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if g.closed.Load() {
		return nil, errors.New("test: member crashed")
	}
	return g.Provider.Join(ctx, self)
}

func (g *joinGate) LeaseTiming() cluster.LeaseTiming {
	return g.Provider.(cluster.LeaseTimer).LeaseTiming()
}

// Seed 002's block-list scenario (B2.3, V1.4, V4.4): a member blocked on one
// member is blocked on every member, evicted from the registry (it fences),
// BlockListApplied is published, and its grains are activated elsewhere,
// never on two members at once.
func TestClusterBlockListMovesGrains(t *testing.T) {
	reg := fastRegistry(t)
	gate := &joinGate{Provider: reg}
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, gate, fastTiming, counterKind())
	c := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 3, a, b, c)
	obs := newObserver(a, b, c)
	ctx := ctxWait(t)
	onB := identitiesOn(t, ctx, a, b, 5, 300)
	require.NotEmpty(t, onB)
	applied := make(chan *cluster.BlockListApplied, 4)
	actor.Subscribe(c.sys.EventStream(), func(ev *cluster.BlockListApplied) { applied <- ev })
	fenced := make(chan struct{}, 1)
	actor.Subscribe(b.sys.EventStream(), func(*cluster.Fenced) {
		select {
		case fenced <- struct{}{}:
		default:
		}
	})
	gate.closed.Store(true) // once evicted, b stays out
	remote.Get(a.sys).BlockList().Block(b.sys.Address())

	select {
	case ev := <-applied: // c heard of the block from a
		require.Contains(t, ev.Member, b.sys.Address())
	case <-time.After(wait):
		t.Fatal("c never applied the block")
	}
	select {
	case <-fenced:
	case <-time.After(wait):
		t.Fatal("the blocked member never fenced")
	}
	require.True(t, remote.Get(c.sys).BlockList().IsBlocked(b.sys.Address()))
	awaitMembers(t, 2, a, c)
	for _, id := range onB {
		for _, from := range []node{a, c} {
			who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
			require.NoError(t, err)
			require.NotEqual(t, b.sys.Address(), who.Member)
		}
	}
	obs.assertNoOverlap(t)
}

// Found by the chaos test (seed 1) and the race sweep alike. A member that
// has shut down stays down: its placement actor, still
// running until the actor system stops it, ticks on with a left membership
// and must neither fence nor end that membership again (which started a
// goroutine after Shutdown had waited for them). Driven by a manual clock.
func TestClusterShutdownDoesNotFence(t *testing.T) {
	clock, reg := manualRegistry(t)
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{counterKind()}}
	fastTiming(&ccfg)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "shop"
	rcfg.Serializers = serializers(t)
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Clock = clock
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	c := cluster.Get(sys)
	fenced := make(chan *cluster.Fenced, 1)
	actor.Subscribe(sys.EventStream(), func(ev *cluster.Fenced) { fenced <- ev })

	require.NoError(t, c.Shutdown(ctxWait(t)))
	require.Equal(t, cluster.StatusStopped, c.Status())
	// Past every lease and stop budget: the placement actor's tick is due.
	clock.Advance(time.Minute)
	// The placement actor answers in order: once it has, the tick is done.
	placement := actor.NewPID(sys.Address(), "$placement")
	_, err := sys.Root().RequestFuture(placement, &clusterpb.ActivationRequest{Kind: "counter", Id: "x"}, 0).ResultContext(ctxWait(t))
	require.NoError(t, err)
	assert.Equal(t, cluster.StatusStopped, c.Status(), "a member that shut down changed status")
	select {
	case ev := <-fenced:
		t.Fatalf("a member that shut down fenced: %+v", ev)
	default:
	}
}

// leaveRecorder wraps the memberships it hands out and records whether
// they ended with Leave (a released marker) or Stop.
type leaveRecorder struct {
	cluster.Provider
	left, stopped atomic.Int32
}

type recordedMembership struct {
	cluster.Membership
	r *leaveRecorder
}

func (r *leaveRecorder) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	m, err := r.Provider.Join(ctx, self)
	if err != nil {
		return nil, err
	}
	return &recordedMembership{Membership: m, r: r}, nil
}

func (r *leaveRecorder) LeaseTiming() cluster.LeaseTiming {
	return r.Provider.(cluster.LeaseTimer).LeaseTiming()
}

func (m *recordedMembership) Leave(ctx context.Context) error {
	m.r.left.Add(1)
	return m.Membership.Leave(ctx)
}

func (m *recordedMembership) Stop(ctx context.Context) error {
	m.r.stopped.Add(1)
	return m.Membership.Stop(ctx)
}

// A graceful shutdown whose grains do not stop within its ctx must not
// leave with a released marker (the others would activate the grains at
// once while they still run): the membership ends without one and the
// others wait its lease out.
func TestClusterShutdownTimeoutLeavesNoReleasedMarker(t *testing.T) {
	reg := newRegistry(t)
	rec := &leaveRecorder{Provider: reg}
	release := make(chan struct{})
	stuck := cluster.NewKind("stuck", actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Stopping:
			<-release // a grain that does not stop in time
		case *Get:
			c.Respond(&Total{})
		}
	}))
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "shop", serializers(t)
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(cluster.Config{Name: "shop", Provider: rec, Kinds: []cluster.Kind{stuck}}),
	}})
	require.NoError(t, err)
	t.Cleanup(func() {
		// The cluster's Shutdown below failed on purpose; it reports so
		// again here, and the rest of the system still shuts down.
		_ = sys.Shutdown(context.Background())
	})
	a := node{sys: sys, c: cluster.Get(sys)}
	awaitMembers(t, 1, a)
	_, err = cluster.Request[*Total](ctxWait(t), a.c, cluster.NewIdentity("stuck", "1"), &Get{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	err = a.c.Shutdown(ctx)
	close(release)
	require.ErrorIs(t, err, cluster.ErrShuttingDown)
	require.Zero(t, rec.left.Load(), "no released marker while a grain still runs")
	require.NotZero(t, rec.stopped.Load())
}

// A grain handles no message once its member's lease is not guaranteed past
// the stop budget, even before the placement actor's tick fences (a stalled
// or late tick): the requester's future fails at once as for a dead letter.
// The tick that fences falls due at that same moment (armTick), so here the
// request meets the grain's own check or the stop that tick makes, and
// fails as a dead letter either way.
func TestClusterGrainRefusesPastItsLease(t *testing.T) {
	clock, reg := manualRegistry(t)
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{counterKind()}}
	ccfg.TickInterval = time.Hour // no tick fences here: only the grain's own check
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "shop", serializers(t)
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Clock = clock
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	a := node{sys: sys, c: cluster.Get(sys)}
	awaitMembers(t, 1, a)
	id := cluster.NewIdentity("counter", "fenced")
	started := first(t, sys, func(ev *cluster.ActivationStarted) bool { return ev.Identity == id })
	_, err := cluster.Request[*Total](ctxWait(t), a.c, id, &Add{N: 1})
	require.NoError(t, err)
	pid := started().PID

	key := a.c.Self().Key()
	reg.Partition(key) // renewals fail from now on
	t.Cleanup(func() { reg.Heal(key) })
	lease := a.c.Lease()
	clock.Advance(lease.Deadline.Sub(clock.Now())) // past deadline − S, at the deadline
	_, err = sys.Root().RequestFuture(pid, &Get{}, 0).ResultContext(ctxWait(t))
	require.ErrorIs(t, err, actor.ErrDeadLetter)
}
