package consul

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

type (
	whereMsg struct{}
	hereMsg  struct{ Address string }
)

// killGate hands a member's Join to the shared provider until it is killed;
// it keeps the member's Membership so the test can stop it abruptly (no
// leave: Consul drops the session when its TTL runs out) and refuses every
// later Join, as a crashed process never joins again.
type killGate struct {
	*Provider
	mu     sync.Mutex
	m      cluster.Membership
	killed atomic.Bool
}

func (g *killGate) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if g.killed.Load() {
		return nil, errors.New("test: member killed")
	}
	m, err := g.Provider.Join(ctx, self)
	g.mu.Lock()
	g.m = m
	g.mu.Unlock()
	return m, err
}

func (g *killGate) kill(t *testing.T, sys *actor.System) {
	g.killed.Store(true)
	g.mu.Lock()
	m := g.m
	g.mu.Unlock()
	require.NoError(t, m.Stop(context.Background()))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = remote.Get(sys).Node().Close(ctx)
}

// With the real Consul agent: 3 members, 1,000 grains, one member killed
// abruptly; every grain is reachable again and no identity is ever active
// on two members at once (from ActivationStarted/ActivationTerminated,
// stamped in one process).
func TestClusterOverConsulSurvivesKill(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.Cluster = "consul-kill" // the cluster's name (cluster.ClusterNamer)
	p := newProvider(t, cfg)

	var (
		mu      sync.Mutex
		active  = map[cluster.Identity][]string{}
		overlap []string
	)
	kind := cluster.NewKind("where", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*whereMsg); ok {
			c.Respond(&hereMsg{Address: c.Self().Address})
		}
	}))
	type member struct {
		sys  *actor.System
		c    *cluster.Cluster
		gate *killGate
	}
	start := func() member {
		gate := &killGate{Provider: p}
		ser := remote.NewSerializers()
		require.NoError(t, remote.RegisterJSON[*whereMsg](ser, "test.Where"))
		require.NoError(t, remote.RegisterJSON[*hereMsg](ser, "test.Here"))
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "consul-kill", ser
		rcfg.GiveUpAfter = 2 * time.Second
		sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
			c.Name = "consul-kill"
			c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(cluster.Config{
				Name: "consul-kill", Provider: gate, Kinds: []cluster.Kind{kind},
				StopBudget: 100 * time.Millisecond, MaxPause: 100 * time.Millisecond,
				TickInterval: 20 * time.Millisecond, ActivationTimeout: 500 * time.Millisecond,
				AttemptTimeout: time.Second, RequestTimeout: 20 * time.Second,
			})}
		})
		c := cluster.Get(sys)
		sys.EventStream().SubscribeWithPredicate(func(e any) {
			mu.Lock()
			defer mu.Unlock()
			switch ev := e.(type) {
			case *cluster.ActivationStarted:
				if len(active[ev.Identity]) > 0 {
					overlap = append(overlap, fmt.Sprintf("%s on %s while on %v", ev.Identity, ev.Member, active[ev.Identity]))
				}
				active[ev.Identity] = append(active[ev.Identity], ev.Member)
			case *cluster.ActivationTerminated:
				if ev.PID.Address != sys.Address() {
					return // another member's broadcast: recorded where it ran
				}
				ms := active[ev.Identity]
				for i, m := range ms {
					if m == ev.Member {
						active[ev.Identity] = append(ms[:i:i], ms[i+1:]...)
						break
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
		return member{sys: sys, c: c, gate: gate}
	}
	a, b, c := start(), start(), start()
	ready := func(ms ...member) {
		for _, m := range ms {
			deadline := time.Now().Add(waitLimit)
			for len(m.c.Members()) != len(ms) {
				require.True(t, time.Now().Before(deadline), "views never converged")
				waitTopology(t, m.sys)
			}
		}
	}
	ready(a, b, c)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	const grains = 1000
	ids := make([]cluster.Identity, grains)
	onB := 0
	for i := range ids {
		ids[i] = cluster.NewIdentity("where", fmt.Sprint(i))
		here, err := cluster.Request[*hereMsg](ctx, a.c, ids[i], &whereMsg{})
		require.NoError(t, err)
		if here.Address == b.sys.Address() {
			onB++
		}
	}
	require.NotZero(t, onB)

	// b dies: no leave; Consul drops its session after its TTL.
	b.gate.kill(t, b.sys)
	var wg sync.WaitGroup
	errs := make(chan error, 2*grains)
	for _, from := range []member{a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, id := range ids {
				here, err := cluster.Request[*hereMsg](ctx, from.c, id, &whereMsg{})
				if err != nil {
					errs <- fmt.Errorf("%s from %s: %w", id, from.sys.Address(), err)
					return
				}
				if here.Address == b.sys.Address() {
					errs <- fmt.Errorf("%s answered from the killed member", id)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	mu.Lock()
	defer mu.Unlock()
	require.Empty(t, overlap, "identities active on two members at once")
}

// waitTopology waits for the next TopologyChanged on sys (or a second).
func waitTopology(t *testing.T, sys *actor.System) {
	ch := make(chan struct{}, 1)
	sub := actor.Subscribe(sys.EventStream(), func(*cluster.TopologyChanged) {
		select {
		case ch <- struct{}{}:
		default:
		}
	})
	defer sys.EventStream().Unsubscribe(sub)
	select {
	case <-ch:
	case <-time.After(time.Second):
	}
}
