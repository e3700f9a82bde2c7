package dashboard_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	Add   struct{ N int }
	Total struct{ N int }
)

const wait = 20 * time.Second

func counterKind() cluster.Kind {
	return cluster.NewKind("counter", actor.PropsFromProducer(func() actor.Actor {
		n := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			if m, ok := c.Message().(*Add); ok {
				n += m.N
				c.Respond(&Total{N: n})
			}
		})
	}))
}

type node struct {
	sys    *actor.System
	c      *cluster.Cluster
	reader *sdkmetric.ManualReader
}

// steadyRegistry: a killed member leaves the view LeaseTTL (2.5 s) after
// its last renewal, and a live member survives its renewals running up to
// 1.3 s late (FencePeriod − RenewInterval − StopBudget) before it fences
// itself, stops its grains and rejoins. With the fence period of 400 ms
// (300 ms of slack) that this package used, members fenced every few
// seconds on a machine at load 12 (renewal timers starved): activations
// dropped to 0 and a previous incarnation showed as an extra member, and
// TestDashboardInBrowser, whose steps need members that stay up, failed.
func steadyRegistry(t testing.TB) *cluster.MemoryRegistry {
	reg, err := cluster.NewMemoryRegistry(cluster.MemoryConfig{LeaseTTL: 2500 * time.Millisecond,
		RenewInterval: 100 * time.Millisecond, FencePeriod: 1500 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(reg.Close)
	return reg
}

func startMember(t testing.TB, reg cluster.Provider, id string, more ...cluster.Kind) node {
	t.Helper()
	ser := remote.NewSerializers()
	require.NoError(t, remote.RegisterJSON[*Add](ser, "test.Add"))
	require.NoError(t, remote.RegisterJSON[*Total](ser, "test.Total"))
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "dash"
	rcfg.Serializers = ser
	rcfg.ReconnectBackoffMin = 5 * time.Millisecond
	rcfg.ReconnectBackoffMax = 50 * time.Millisecond
	ccfg := cluster.Config{Name: "dash", Provider: reg, MemberID: id, Kinds: append([]cluster.Kind{counterKind()}, more...),
		StopBudget: 100 * time.Millisecond, MaxPause: 100 * time.Millisecond, TickInterval: 20 * time.Millisecond,
		ActivationTimeout: 300 * time.Millisecond, AttemptTimeout: 500 * time.Millisecond}
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader), dashboard.View())
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "dash"
		c.MeterProvider = mp
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	c := cluster.Get(sys)
	require.NotNil(t, c)
	return node{sys: sys, c: c, reader: reader}
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
				t.Fatalf("member %s never saw %d members", nd.c.Self().ID, n)
			}
		}
		nd.sys.EventStream().Unsubscribe(sub)
		awaitReady(t, nd)
	}
}

// awaitReady waits until the member's placement actor has installed a view
// under a valid lease (StatusReady): seeing the members comes first.
func awaitReady(t testing.TB, nd node) {
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
		t.Fatalf("member %s never became ready (status %s)", nd.c.Self().ID, nd.c.Status())
	}
}

// joinGate refuses joins once closed: a member behind it that loses its
// membership cannot come back, as a crashed process cannot.
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

// kill stops a member abruptly: it cannot rejoin, its registry lease is no
// longer renewed and its connections are closed, without a Leave.
func kill(reg *cluster.MemoryRegistry, gate *joinGate, nd node) {
	gate.closed.Store(true)
	reg.Partition(nd.c.Self().Key())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = remote.Get(nd.sys).Node().Close(ctx)
}
