package clusterbench

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/types/known/wrapperspb"

	fraktor "github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// fraktorCluster is n fraktor-go systems with remote and the cluster
// installed, sharing one MemoryRegistry.
type fraktorCluster struct {
	reg   *cluster.MemoryRegistry
	sys   []*fraktor.System
	c     []*cluster.Cluster
	addr  []string
	echo  []*fraktor.PID // the ordinary echo actor of each member
	index map[string]int // member address -> index
	ring  cluster.HashStrategy
}

// fraktorEcho answers every payload with itself.
func fraktorEcho() fraktor.Actor {
	return fraktor.ReceiveFunc(func(c fraktor.Context) {
		if m, ok := c.Message().(*wrapperspb.BytesValue); ok {
			c.Respond(m)
		}
	})
}

func startFraktor(opts Options) (_ *fraktorCluster, err error) {
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		return nil, fmt.Errorf("clusterbench: registry: %w", err)
	}
	fc := &fraktorCluster{reg: reg, index: make(map[string]int), ring: cluster.NewRendezvous(cluster.DefaultHashConfig())}
	defer func() {
		if err != nil {
			ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
			defer cancel()
			err = errors.Join(err, fc.Close(ctx))
		}
	}()
	kind := cluster.NewKind(Kind, fraktor.PropsFromProducer(fraktorEcho))
	for range opts.Members {
		ser := remote.NewSerializers()
		if err := ser.RegisterProto(&wrapperspb.BytesValue{}); err != nil {
			return nil, fmt.Errorf("clusterbench: register types: %w", err)
		}
		rcfg := remote.DefaultConfig()
		rcfg.ListenAddress = "127.0.0.1:0"
		rcfg.SystemName = "bench"
		rcfg.Serializers = ser
		ccfg := cluster.Config{Name: "bench", Provider: reg, Kinds: append([]cluster.Kind{kind}, opts.FraktorKinds...), PidCacheCapacity: opts.PidCacheCapacity}
		sys, err := fraktor.NewSystem(fraktor.SystemConfig{Name: "bench", Extensions: []fraktor.ExtensionInstaller{
			remote.Install(rcfg),
			cluster.Install(ccfg),
		}})
		if err != nil {
			return nil, fmt.Errorf("clusterbench: fraktor member: %w", err)
		}
		fc.sys = append(fc.sys, sys)
		fc.c = append(fc.c, cluster.Get(sys))
		addr := remote.Get(sys).Address()
		fc.index[addr] = len(fc.addr)
		fc.addr = append(fc.addr, addr)
		echo, err := sys.Root().SpawnNamed(fraktor.PropsFromProducer(fraktorEcho), echoName)
		if err != nil {
			return nil, fmt.Errorf("clusterbench: echo actor: %w", err)
		}
		fc.echo = append(fc.echo, fraktor.NewPID(addr, echo.ID))
	}
	if err := fc.awaitViews(); err != nil {
		return nil, err
	}
	return fc, nil
}

// awaitViews waits until every member is ready with a view of every member.
func (fc *fraktorCluster) awaitViews() error {
	ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
	defer cancel()
	n := len(fc.sys)
	for i, sys := range fc.sys {
		changed := make(chan struct{}, 1)
		poke := func() {
			select {
			case changed <- struct{}{}:
			default:
			}
		}
		s1 := fraktor.Subscribe(sys.EventStream(), func(*cluster.TopologyChanged) { poke() })
		s2 := fraktor.Subscribe(sys.EventStream(), func(*cluster.ClusterStatusChanged) { poke() })
		c := fc.c[i]
		for c.Status() != cluster.StatusReady || len(c.Members()) != n {
			select {
			case <-changed:
			case <-ctx.Done():
				sys.EventStream().Unsubscribe(s1)
				sys.EventStream().Unsubscribe(s2)
				return fmt.Errorf("%w: fraktor member %d is %v with %d of %d members", ErrNotReady, i, c.Status(), len(c.Members()), n)
			}
		}
		sys.EventStream().Unsubscribe(s1)
		sys.EventStream().Unsubscribe(s2)
	}
	return nil
}

func (fc *fraktorCluster) Members() int { return len(fc.sys) }

func (fc *fraktorCluster) Request(ctx context.Context, from int, id string, msg *wrapperspb.BytesValue) error {
	reply, err := cluster.Request[*wrapperspb.BytesValue](ctx, fc.c[from], cluster.NewIdentity(Kind, id), msg)
	if err != nil {
		return err
	}
	return checkReply(reply, msg)
}

func (fc *fraktorCluster) RemoteRequest(ctx context.Context, from, to int, msg *wrapperspb.BytesValue) error {
	reply, err := fraktor.Request[*wrapperspb.BytesValue](ctx, fc.sys[from].Root(), fc.echo[to], msg)
	if err != nil {
		return err
	}
	return checkReply(reply, msg)
}

func (fc *fraktorCluster) Owner(from int, id string) (int, error) {
	t, ok := fc.c[from].Topology()
	if !ok {
		return -1, ErrNotReady
	}
	m, err := fc.ring.Build(t).Owner(cluster.NewIdentity(Kind, id))
	if err != nil {
		return -1, err
	}
	i, ok := fc.index[m.Address]
	if !ok {
		return -1, fmt.Errorf("%w: owner %s is not a member", ErrNotReady, m.Address)
	}
	return i, nil
}

// Close shuts every system down, then closes the registry.
func (fc *fraktorCluster) Close(ctx context.Context) error {
	var errs []error
	for _, sys := range fc.sys {
		errs = append(errs, sys.Shutdown(ctx))
	}
	fc.sys = nil
	if fc.reg != nil {
		fc.reg.Close()
		fc.reg = nil
	}
	return errors.Join(errs...)
}
