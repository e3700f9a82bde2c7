package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/hashicorp/consul/api"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/consul"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
	"github.com/fraktor-go/fraktor/remote"
)

const clusterName = "bank"

// The embedded registry's lease timing: shorter than its defaults so that a
// killed member's grains move within about three seconds (T + W).
var demoRegistry = cluster.MemoryConfig{
	LeaseTTL:      1500 * time.Millisecond, // T
	RenewInterval: 250 * time.Millisecond,  // R
	FencePeriod:   1000 * time.Millisecond, // F
}

// consulWaitOut is the members' WaitOut with Consul (see startMember).
const consulWaitOut = 12 * time.Second

// member is one actor system with the cluster installed.
type member struct {
	name   string
	sys    *actor.System
	c      *cluster.Cluster
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
	gate   *joinGate // nil unless this member may be killed
	dead   atomic.Bool
}

// joinGate refuses joins once closed: a killed member cannot come back, as
// a crashed process cannot.
type joinGate struct {
	cluster.Provider
	closed atomic.Bool
}

var errCrashed = errors.New("demo: member was killed")

func (g *joinGate) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if g.closed.Load() {
		return nil, errCrashed
	}
	return g.Provider.Join(ctx, self)
}

// LeaseTiming passes the registry's timing on, so the cluster validates
// its wait-out against it.
func (g *joinGate) LeaseTiming() cluster.LeaseTiming {
	return g.Provider.(cluster.LeaseTimer).LeaseTiming()
}

// newProvider returns the membership provider and its closer.
func newProvider(o options, log *slog.Logger) (cluster.Provider, func(), error) {
	if o.consul == "" {
		reg, err := cluster.NewMemoryRegistry(demoRegistry)
		if err != nil {
			return nil, nil, err
		}
		return reg, reg.Close, nil
	}
	cfg := consul.DefaultConfig()
	cfg.API = api.Config{Address: o.consul}
	cfg.Cluster = clusterName
	cfg.Logger = log
	p, err := consul.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return p, func() {}, nil
}

func startMember(ctx context.Context, name string, prov cluster.Provider, withConsul bool, st accountStore, log *slog.Logger) (*member, error) {
	ser := remote.NewSerializers() // the generated kind registers the account's messages
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = clusterName
	rcfg.Serializers = ser
	ccfg := cluster.Config{
		Name:              clusterName,
		Provider:          prov,
		MemberID:          name, // "" in --join mode: the remote address
		Kinds:             []cluster.Kind{accountGrains(st)},
		StopBudget:        250 * time.Millisecond,
		MaxPause:          250 * time.Millisecond,
		TickInterval:      100 * time.Millisecond,
		ActivationTimeout: time.Second,
		AttemptTimeout:    time.Second,
	}
	if withConsul {
		// The Consul provider reports its lease timing (default fence
		// period 10 s), from which a zero WaitOut would be about 11.2 s;
		// 12 s leaves a margin.
		ccfg.WaitOut = consulWaitOut
	}
	m := &member{name: name, reader: sdkmetric.NewManualReader()}
	m.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(m.reader), dashboard.View())
	sys, err := actor.NewSystem(actor.SystemConfig{
		Name: clusterName, Logger: log, MeterProvider: m.mp,
		Extensions: []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)},
	})
	if err != nil {
		_ = m.mp.Shutdown(ctx)
		return nil, fmt.Errorf("demo: start member %s: %w", name, err)
	}
	m.sys, m.c = sys, cluster.Get(sys)
	if name == "" {
		m.name = m.c.Self().ID
	}
	return m, nil
}

// kill stops m abruptly, as a crash would: it cannot rejoin, its registry
// lease is no longer renewed, and its connections are closed; it does not
// leave. Only members behind a joinGate on the embedded registry can be
// killed.
func (m *member) kill(reg *cluster.MemoryRegistry) {
	m.dead.Store(true)
	m.gate.closed.Store(true)
	reg.Partition(m.c.Self().Key())
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // close at once: no grace for a crash
	_ = remote.Get(m.sys).Node().Close(ctx)
}

// shutdown ends the member gracefully (or, for a killed one, ends what is
// left of it).
func (m *member) shutdown(ctx context.Context) error {
	err := m.sys.Shutdown(ctx)
	return errors.Join(err, m.mp.Shutdown(ctx))
}

// retries reads the cluster's request-retries counter.
func (m *member) retries() int64 {
	var rm metricdata.ResourceMetrics
	if err := m.reader.Collect(context.Background(), &rm); err != nil {
		return 0
	}
	var n int64
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			if s, ok := mt.Data.(metricdata.Sum[int64]); ok && mt.Name == "fraktor.cluster.request.retries" {
				for _, dp := range s.DataPoints {
					n += dp.Value
				}
			}
		}
	}
	return n
}

// awaitView waits until every member is ready with a view of n members.
func awaitView(ctx context.Context, ms []*member, n int) error {
	for _, m := range ms {
		if err := m.c.WaitForMembers(ctx, n); err != nil {
			return fmt.Errorf("demo: member %s: %w", m.name, err)
		}
	}
	return nil
}
