package cluster_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/testkit"
)

// Messages of the grain tests (JSON over remote).
type (
	Add       struct{ N int }
	Get       struct{}
	Total     struct{ N int }
	WhoAmI    struct{}
	Identity  struct{ Kind, ID, Member string }
	PanicKind struct{}
	Sleep     struct{} // passivates the grain
	Silent    struct{} // never answered
)

const wait = 20 * time.Second

func serializers(t testing.TB) *remote.Serializers {
	ser := remote.NewSerializers()
	require.NoError(t, remote.RegisterJSON[*Add](ser, "test.Add"))
	require.NoError(t, remote.RegisterJSON[*Get](ser, "test.Get"))
	require.NoError(t, remote.RegisterJSON[*Total](ser, "test.Total"))
	require.NoError(t, remote.RegisterJSON[*WhoAmI](ser, "test.WhoAmI"))
	require.NoError(t, remote.RegisterJSON[*Identity](ser, "test.Identity"))
	require.NoError(t, remote.RegisterJSON[*Sleep](ser, "test.Sleep"))
	require.NoError(t, remote.RegisterJSON[*Silent](ser, "test.Silent"))
	return ser
}

// counterKind is a grain that sums Adds and answers Get and WhoAmI.
func counterKind(opts ...cluster.KindOption) cluster.Kind {
	return cluster.NewKind("counter", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *Add:
				n += m.N
				c.Respond(&Total{N: n})
			case *Get:
				c.Respond(&Total{N: n})
			case *WhoAmI:
				id, _ := cluster.IdentityOf(c)
				c.Respond(&Identity{Kind: id.Kind, ID: id.ID, Member: c.Self().Address})
			case *Sleep:
				cluster.Passivate(c)
				c.Respond(&Total{N: n})
			}
		})
	}), opts...)
}

// manualRegistry is an in-memory registry with the default timing on a
// manual clock at Unix 1000 s, closed at the test's end.
func manualRegistry(t testing.TB) (*scheduler.ManualClock, *cluster.MemoryRegistry) {
	t.Helper()
	clock := scheduler.NewManualClock(time.Unix(1_000, 0))
	mcfg := cluster.DefaultMemoryConfig()
	mcfg.Clock = clock
	reg, err := cluster.NewMemoryRegistry(mcfg)
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return clock, reg
}

type node struct {
	sys *actor.System
	c   *cluster.Cluster
}

func startMember(t testing.TB, reg cluster.Provider, kinds ...cluster.Kind) node {
	t.Helper()
	return startMemberWith(t, reg, func(*cluster.Config) {}, kinds...)
}

func startMemberWith(t testing.TB, reg cluster.Provider, tune func(*cluster.Config), kinds ...cluster.Kind) node {
	t.Helper()
	return startMemberFull(t, reg, tune, func(*actor.SystemConfig) {}, kinds...)
}

func startMemberFull(t testing.TB, reg cluster.Provider, tune func(*cluster.Config), sysTune func(*actor.SystemConfig), kinds ...cluster.Kind) node {
	t.Helper()
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: kinds}
	tune(&ccfg)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "shop"
	rcfg.Serializers = serializers(t)
	rcfg.ReconnectBackoffMin = 5 * time.Millisecond
	rcfg.ReconnectBackoffMax = 50 * time.Millisecond
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Extensions = []actor.ExtensionInstaller{
			remote.Install(rcfg),
			cluster.Install(ccfg),
		}
		sysTune(c)
	})
	c := cluster.Get(sys)
	require.NotNil(t, c)
	return node{sys: sys, c: c}
}

func newRegistry(t testing.TB) *cluster.MemoryRegistry {
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return reg
}

// identitiesOn returns n counter identities whose activation is on member
// on, asking from member from (which activates them), among the first
// limit IDs; fewer when limit runs out.
func identitiesOn(t testing.TB, ctx context.Context, from, on node, n, limit int) []cluster.Identity {
	t.Helper()
	var ids []cluster.Identity
	for i := 0; len(ids) < n && i < limit; i++ {
		id := cluster.NewIdentity("counter", fmt.Sprint(i))
		who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
		require.NoError(t, err)
		if who.Member == on.sys.Address() {
			ids = append(ids, id)
		}
	}
	return ids
}

// awaitMembers waits until every node's view has n members.
func awaitMembers(t testing.TB, n int, nodes ...node) {
	t.Helper()
	for _, nd := range nodes {
		got := make(chan struct{}, 1)
		sub := actor.Subscribe(nd.sys.EventStream(), func(ev *cluster.TopologyChanged) {
			if len(ev.Members) == n {
				select {
				case got <- struct{}{}:
				default:
				}
			}
		})
		if len(nd.c.Members()) != n {
			select {
			case <-got:
			case <-time.After(wait):
				t.Fatalf("member %s never saw %d members (has %d)", nd.sys.Address(), n, len(nd.c.Members()))
			}
		}
		nd.sys.EventStream().Unsubscribe(sub)
		awaitMemberReady(t, nd)
	}
}

// awaitMemberReady waits until the member's placement actor installed a view
// under a valid lease (StatusReady).
func awaitMemberReady(t testing.TB, nd node) {
	t.Helper()
	ready := make(chan struct{}, 1)
	sub := actor.Subscribe(nd.sys.EventStream(), func(ev *cluster.ClusterStatusChanged) {
		if ev.To == cluster.StatusReady {
			select {
			case ready <- struct{}{}:
			default:
			}
		}
	})
	defer nd.sys.EventStream().Unsubscribe(sub)
	if nd.c.Status() == cluster.StatusReady {
		return
	}
	select {
	case <-ready:
	case <-time.After(wait):
		t.Fatalf("member %s never became ready (status %s)", nd.sys.Address(), nd.c.Status())
	}
}

func ctxWait(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// B1.1, B1.3, V2.1, V3.1, B4.1: three members over loopback TCP; requests
// from every member reach one activation per identity, on its owner.
func TestClusterRequestAcrossMembers(t *testing.T) {
	reg := newRegistry(t)
	nodes := []node{startMember(t, reg, counterKind()), startMember(t, reg, counterKind()), startMember(t, reg, counterKind())}
	awaitMembers(t, 3, nodes...)
	ctx := ctxWait(t)
	for i := range 30 {
		id := cluster.NewIdentity("counter", fmt.Sprint(i))
		for _, nd := range nodes {
			_, err := cluster.Request[*Total](ctx, nd.c, id, &Add{N: 1})
			require.NoError(t, err)
		}
		var where string
		for j, nd := range nodes {
			tot, err := cluster.Request[*Total](ctx, nd.c, id, &Get{})
			require.NoError(t, err)
			require.Equal(t, 3, tot.N, "identity %s seen from member %d", id, j)
			who, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{})
			require.NoError(t, err)
			require.Equal(t, id.ID, who.ID)
			if where == "" {
				where = who.Member
			}
			require.Equal(t, where, who.Member, "one activation per identity")
		}
	}
	total := 0
	for _, nd := range nodes {
		total += nd.c.ActiveCount()
	}
	require.Equal(t, 30, total)
}

// V2.2: a kind nobody hosts fails at once with ErrNoSuchKind.
func TestClusterNoSuchKind(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	awaitMembers(t, 1, a)
	_, err := cluster.Request[*Total](ctxWait(t), a.c, cluster.NewIdentity("nope", "1"), &Get{})
	require.ErrorIs(t, err, cluster.ErrNoSuchKind)
}

// V2.2, B3.2: a grain whose Started panics is an activation failure:
// ActivationFailed is published and the caller gets the error, not a hang.
func TestClusterActivationFailure(t *testing.T) {
	reg := newRegistry(t)
	bad := cluster.NewKind("bad", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*actor.Started); ok {
			panic("cannot start")
		}
	}))
	a := startMember(t, reg, bad)
	awaitMembers(t, 1, a)
	failed := make(chan *cluster.ActivationFailed, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ActivationFailed) { failed <- ev })
	_, err := cluster.Request[*Total](ctxWait(t), a.c, cluster.NewIdentity("bad", "1"), &Get{})
	require.ErrorIs(t, err, cluster.ErrActivationFailed)
	select {
	case ev := <-failed:
		require.Equal(t, "bad", ev.Identity.Kind)
	case <-time.After(wait):
		t.Fatal("no ActivationFailed")
	}
	require.Eventually(t, func() bool { return a.c.ActiveCount() == 0 }, wait, time.Millisecond)
}

// A client-only member calls grains and is never chosen as owner.
func TestClusterClientOnlyMember(t *testing.T) {
	reg := newRegistry(t)
	host := startMember(t, reg, counterKind())
	client := startMember(t, reg)
	awaitMembers(t, 2, host, client)
	ctx := ctxWait(t)
	for i := range 20 {
		who, err := cluster.Request[*Identity](ctx, client.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, host.sys.Address(), who.Member)
	}
	require.Zero(t, client.c.ActiveCount())
}

// V2.5, B3.4, B3.5: a graceful shutdown stops the member's grains, leaves
// with a released marker, and the others take over at once (no wait-out).
func TestClusterGracefulShutdownHandsOver(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	ids := make([]cluster.Identity, 40)
	for i := range ids {
		ids[i] = cluster.NewIdentity("counter", fmt.Sprint(i))
		_, err := cluster.Request[*Total](ctx, a.c, ids[i], &Add{N: 1})
		require.NoError(t, err)
	}
	require.NotZero(t, b.c.ActiveCount())
	require.NoError(t, b.sys.Shutdown(ctx))
	require.Equal(t, 0, b.c.ActiveCount(), "gauge reads zero after shutdown")
	awaitMembers(t, 1, a)
	for _, id := range ids {
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, a.sys.Address(), who.Member)
	}
	_, err := cluster.Request[*Total](ctx, b.c, ids[0], &Get{})
	require.ErrorIs(t, err, cluster.ErrShuttingDown)
}

// Config.Validate names the bad field; NewSystem fails and installs nothing
// (B1.2).
func TestClusterInvalidConfig(t *testing.T) {
	reg := newRegistry(t)
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	_, err := actor.NewSystem(actor.SystemConfig{Name: "x", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(cluster.Config{Provider: reg, RequestTimeout: -1}),
	}})
	require.ErrorIs(t, err, cluster.ErrInvalidConfig)
	require.ErrorContains(t, err, "RequestTimeout")

	// The cluster name is remote's system name: the handshake refuses
	// members of other clusters by it.
	rcfg.SystemName = "other"
	_, err = actor.NewSystem(actor.SystemConfig{Name: "x", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg), cluster.Install(cluster.Config{Name: "shop", Provider: reg}),
	}})
	require.ErrorIs(t, err, cluster.ErrInvalidConfig)
	require.ErrorContains(t, err, "SystemName")
}

// Grain-to-grain calls through RequestFuture + PipeTo never block a worker:
// 1,000 grains on 2 workers each call the next in a chain.
func TestClusterGrainChainsDoNotDeadlock(t *testing.T) {
	type hop struct{ Left int }
	reg := newRegistry(t)
	var a node
	chain := cluster.NewKind("chain", actor.PropsFromFunc(func(c actor.Context) {
		m, ok := c.Message().(*hop)
		if !ok {
			return
		}
		if m.Left == 0 {
			c.Respond(&Total{N: 0})
			return
		}
		id, _ := cluster.IdentityOf(c)
		next := cluster.NewIdentity("chain", fmt.Sprintf("%s-%d", strings.SplitN(id.ID, "-", 2)[0], m.Left-1))
		cluster.Get(c.System()).RequestFuture(next, &hop{Left: m.Left - 1}, wait).PipeTo(c.Sender())
	}))
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "shop"
	a.sys = testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name, c.Workers = "shop", 2
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg),
			cluster.Install(cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{chain}})}
	})
	a.c = cluster.Get(a.sys)
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	var wg sync.WaitGroup
	errs := make(chan error, 10)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("chain", fmt.Sprintf("c%d-100", i)), &hop{Left: 99})
			if err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, 1000, a.c.ActiveCount())
}

// Messages to one identity from one caller arrive in the order sent: Sends
// made while the activation is under way queue behind it, and a Request
// after them does not overtake them.
func TestClusterSendOrderAcrossActivation(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	for i := range 20 {
		id := cluster.NewIdentity("counter", fmt.Sprintf("ordered-%d", i))
		for range 50 {
			a.c.Send(id, &Add{N: 1})
		}
		tot, err := cluster.Request[*Total](ctx, a.c, id, &Get{})
		require.NoError(t, err)
		require.Equal(t, 50, tot.N, "the Request overtook Sends to %s", id)
	}
}

// ActiveCountByKind splits ActiveCount by kind, and Lease reports the
// membership lease of the current incarnation.
func TestClusterActiveCountByKindAndLease(t *testing.T) {
	reg := newRegistry(t)
	other := cluster.NewKind("other", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Get); ok {
			c.Respond(&Total{})
		}
	}))
	a := startMember(t, reg, counterKind(), other)
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	for i := range 3 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Get{})
		require.NoError(t, err)
	}
	_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("other", "x"), &Get{})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"counter": 3, "other": 1}, a.c.ActiveCountByKind())
	require.Equal(t, a.c.ActiveCount(), 4)
	lease := a.c.Lease()
	require.Equal(t, cluster.MembershipLeaseHeld, lease.Status)
	require.True(t, lease.Valid(time.Now()))
}
