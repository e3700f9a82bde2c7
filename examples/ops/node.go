package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hashicorp/consul/api"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/consul"
	"github.com/fraktor-go/fraktor/cluster/dashboard"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// nodeOptions configures one process's member: a grain host, or a
// client-only member (the load driver) when hostKinds is false.
type nodeOptions struct {
	name      string // member ID, stable across restarts
	listen    string // remote's listen address
	advertise string // remote's advertised address; "" = the listener's
	cluster   string // the cluster's name: remote's SystemName, the cluster's Name and Consul's Cluster
	consul    string // the Consul agent's HTTP address
	tlsCert   string
	tlsKey    string
	tlsCA     string
	httpAddr  string // metrics, health and the dashboard; "" = none
	hostKinds bool

	shutdownTimeout time.Duration
	sessionIdle     time.Duration

	// Consul timing; 0 keeps consul.DefaultConfig's.
	consulTTL, consulRenew, consulRequestTimeout, consulFence time.Duration
	waitOut                                                   time.Duration // 0: computed by the cluster
	retryAttempts                                             int           // 0: cluster.DefaultRetryPolicy's
	retryMax                                                  time.Duration
	attemptTimeout                                            time.Duration // 0: the cluster's RequestTimeout
}

// node is one running member with its HTTP endpoint.
type node struct {
	o       nodeOptions
	log     *slog.Logger
	sys     *actor.System
	c       *cluster.Cluster
	reader  *sdkmetric.ManualReader
	mp      *sdkmetric.MeterProvider
	dash    *dashboard.Dashboard
	httpSrv *http.Server
	httpLn  net.Listener
	subs    []*actor.Subscription
}

func (o nodeOptions) consulConfig(log *slog.Logger) consul.Config {
	cfg := consul.DefaultConfig()
	if o.consul != "" {
		cfg.API = api.Config{Address: o.consul}
	}
	cfg.Cluster = o.cluster
	cfg.Logger = log.With("component", "consul")
	if o.consulTTL > 0 {
		cfg.SessionTTL = o.consulTTL
	}
	if o.consulRenew > 0 {
		cfg.RenewInterval = o.consulRenew
	}
	if o.consulRequestTimeout > 0 {
		cfg.RequestTimeout = o.consulRequestTimeout
	}
	if o.consulFence > 0 {
		cfg.FencePeriod = o.consulFence
	}
	return cfg
}

// startNode starts the member and its HTTP endpoint. It returns once the
// system is up (joined Consul); readiness is Cluster.Status, /readyz.
func startNode(ctx context.Context, o nodeOptions, log *slog.Logger) (*node, error) {
	serverTLS, clientTLS, err := loadTLS(o.tlsCert, o.tlsKey, o.tlsCA)
	if err != nil {
		return nil, err
	}
	prov, err := consul.New(o.consulConfig(log))
	if err != nil {
		return nil, fmt.Errorf("ops: consul provider: %w", err)
	}
	ser := remote.NewSerializers()
	if err := registerMessages(ser); err != nil {
		return nil, err
	}
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = o.listen
	rcfg.AdvertisedAddress = o.advertise
	rcfg.SystemName = o.cluster
	rcfg.Serializers = ser
	rcfg.ServerTLS, rcfg.ClientTLS = serverTLS, clientTLS
	rcfg.Logger = log.With("component", "remote")
	ccfg := cluster.Config{
		Name:     o.cluster,
		Provider: prov,
		MemberID: o.name,
		WaitOut:  o.waitOut,
		// One attempt's wait for the grain's reply: a request in flight
		// to a member that dies waits this long before it retries.
		AttemptTimeout: o.attemptTimeout,
	}
	if o.hostKinds {
		ccfg.Kinds = kinds(o.name, o.sessionIdle)
	}
	if o.retryAttempts > 0 {
		ccfg.Retry = cluster.DefaultRetryPolicy()
		ccfg.Retry.MaxAttempts = o.retryAttempts
		if o.retryMax > 0 {
			ccfg.Retry.Max = o.retryMax
		}
	}
	n := &node{o: o, log: log, reader: sdkmetric.NewManualReader()}
	n.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(n.reader), dashboard.View())
	n.sys, err = actor.NewSystem(actor.SystemConfig{
		Name:          o.cluster,
		Logger:        log,
		MeterProvider: n.mp,
		// Per-kind invoke telemetry: fraktor.actor.dequeued{kind="counter"}
		// is the grain side's message count (the cluster's request
		// instruments are the caller's).
		KindMiddleware: middleware.KindTelemetry(),
		Extensions:     []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)},
	})
	if err != nil {
		_ = n.mp.Shutdown(ctx)
		return nil, fmt.Errorf("ops: start member %s: %w", o.name, err)
	}
	n.c = cluster.Get(n.sys)
	n.subscribe()
	if o.httpAddr != "" {
		if err := n.serveHTTP(); err != nil {
			_ = n.close(ctx)
			return nil, err
		}
	}
	log.Info("member started", "member", n.c.Self().Key(), "address", n.c.Self().Address,
		"http", n.httpAddress(), "tls", serverTLS != nil)
	return n, nil
}

// subscribe logs what an operator needs to see of the cluster's events.
func (n *node) subscribe() {
	es := n.sys.EventStream()
	l := n.log.With("component", "ops")
	n.subs = append(n.subs,
		actor.Subscribe(es, func(e *cluster.ClusterStatusChanged) {
			l.Info("status", "from", e.From.String(), "to", e.To.String(), "member", e.Member)
		}),
		actor.Subscribe(es, func(e *cluster.TopologyChanged) {
			l.Info("topology", "epoch", e.Epoch, "members", len(e.Members), "joined", e.Joined, "left", e.Left)
		}),
		actor.Subscribe(es, func(e *cluster.LeaseLost) {
			l.Warn("lease lost", "member", e.Member, "err", e.Err)
		}),
		actor.Subscribe(es, func(e *cluster.Fenced) {
			l.Warn("fenced", "member", e.Member, "stopped", e.Stopped, "err", e.Err)
		}),
		actor.Subscribe(es, func(e *cluster.RetryThrottled) {
			l.Warn("retries exhausted", "identity", e.Identity.String(), "attempts", e.Attempts, "err", e.Err)
		}),
		actor.Subscribe(es, func(e *cluster.ActivationFailed) {
			l.Warn("activation failed", "identity", e.Identity.String(), "err", e.Err)
		}),
		actor.Subscribe(es, func(e *remote.Event) {
			switch e.Kind {
			case remote.EventHandshakeRefused, remote.EventProtocolError, remote.EventDialFailed:
				l.Warn("remote", "event", e.Kind.String(), "peer", e.Peer.Address, "remote_addr", e.RemoteAddr, "err", e.Err)
			case remote.EventConnected, remote.EventDisconnected, remote.EventPeerTerminated:
				l.Info("remote", "event", e.Kind.String(), "peer", e.Peer.Address, "inbound", e.Inbound, "err", e.Err)
			}
		}),
	)
}

func (n *node) httpAddress() string {
	if n.httpLn == nil {
		return ""
	}
	return n.httpLn.Addr().String()
}

// close shuts the member down within ctx: the cluster leaves gracefully
// (its grains stop, a released marker lets the others take over at once),
// then remote, then the HTTP endpoint.
func (n *node) close(ctx context.Context) error {
	start := time.Now()
	err := n.sys.Shutdown(ctx)
	n.log.Info("system shut down", "took", time.Since(start).Round(time.Millisecond), "err", err)
	for _, s := range n.subs {
		n.sys.EventStream().Unsubscribe(s)
	}
	if n.dash != nil {
		n.dash.Close()
	}
	if n.httpSrv != nil {
		err = errors.Join(err, n.httpSrv.Shutdown(ctx))
	}
	return errors.Join(err, n.mp.Shutdown(ctx))
}
