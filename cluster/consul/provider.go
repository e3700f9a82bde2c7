package consul

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

// Provider is the Consul membership provider. It holds only its Config;
// every Join creates its own client and goroutines. Safe for concurrent
// use.
type Provider struct {
	cfg Config
}

var _ cluster.Provider = (*Provider)(nil)

// New validates cfg and returns a provider. It does not contact Consul.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg}, nil
}

// Join implements cluster.Provider. It creates the session (its creation
// starts the lease: the deadline is its send time plus FencePeriod), takes
// the member key with it in a transaction that also checks that neither a
// member key nor a released marker of this incarnation exists (else the
// error wraps cluster.ErrIncarnationReused), registers the service and
// starts the renewal and view goroutines. Each request is bounded by
// RequestTimeout and ctx; an agent that does not answer gives an error
// wrapping ErrUnreachable, one that refuses gives ErrRequestFailed. On
// failure nothing is left behind (the session is destroyed).
func (p *Provider) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := validateMember(self); err != nil {
		return nil, err
	}
	cfg := p.cfg
	log := cfg.logger().With("cluster", cfg.Cluster, "member", self.Key())
	feed, err := cluster.NewMembershipFeed(cluster.MembershipFeedConfig{
		Self: self, Fence: cfg.FencePeriod, Logger: log, EventBuffer: cfg.EventBuffer,
	})
	if err != nil {
		return nil, err
	}
	client, closeIdle, err := newClient(cfg.API)
	if err != nil {
		return nil, fmt.Errorf("consul: join %s: %w", self.Key(), err)
	}
	m := &membership{
		MembershipFeed: feed,
		cfg:            cfg,
		log:            log,
		client:         client,
		closeIdle:      closeIdle,
		keys:           newKeyspace(cfg.KeyPrefix, cfg.Cluster),
		self:           self,
		serviceID:      fmt.Sprintf("fraktor-%s-%s-%d", cfg.Cluster, url.PathEscape(self.ID), self.Incarnation),
	}
	m.checkID = m.serviceID + ":lease"
	if err := m.register(ctx); err != nil {
		closeIdle()
		return nil, fmt.Errorf("consul: join %s at %s: %w", self.Key(), cfg.API.Address, err)
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.wg.Go(func() { m.renewLoop(loopCtx) })
	m.wg.Go(func() { m.watchLoop(loopCtx) })
	log.Info("consul: member joined", "session", shortID(m.session))
	return m, nil
}

// newClient builds a client from a copy of c. The default transport is
// cloned so that each membership owns (and can close) its connections.
func newClient(c api.Config) (*api.Client, func(), error) {
	if c.HttpClient == nil && c.Transport != nil {
		c.Transport = c.Transport.Clone()
	}
	client, err := api.NewClient(&c)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrInvalidConfig, err)
	}
	hc := c.HttpClient
	return client, func() {
		if hc != nil {
			hc.CloseIdleConnections()
		}
	}, nil
}

// register creates the session, takes the member key and registers the
// service; on failure it destroys the session again.
func (m *membership) register(ctx context.Context) (err error) {
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	id, _, err := m.client.Session().CreateNoChecks(&api.SessionEntry{
		Name:     "fraktor:" + m.cfg.Cluster + ":" + m.self.Key(),
		TTL:      m.cfg.SessionTTL.String(),
		Behavior: api.SessionBehaviorDelete,
	}, (&api.WriteOptions{}).WithContext(rctx))
	cancel()
	if err != nil {
		return fmt.Errorf("create session: %w", classify(err))
	}
	m.session = id
	defer func() {
		if err != nil {
			m.destroySession(context.WithoutCancel(ctx))
		}
	}()
	value, err := encodeRecord(m.self, time.Time{})
	if err != nil {
		return err
	}
	key := m.keys.member(m.self)
	// A record at the key that no session holds is not a member (see
	// decodeView); Join takes it over, checking that it did not change.
	rctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
	cur, _, err := m.client.KV().Get(key, (&api.QueryOptions{RequireConsistent: true}).WithContext(rctx))
	cancel()
	if err != nil {
		return fmt.Errorf("read member key: %w", classify(err))
	}
	memberCheck := &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: key}
	if cur != nil {
		if cur.Session != "" {
			return fmt.Errorf("take member key %s: %w (held by a live session)", key, cluster.ErrIncarnationReused)
		}
		memberCheck = &api.KVTxnOp{Verb: api.KVCheckIndex, Key: key, Index: cur.ModifyIndex}
	}
	ops := api.TxnOps{
		{KV: memberCheck},
		{KV: &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: m.keys.releasedKey(m.self)}},
		{KV: &api.KVTxnOp{Verb: api.KVLock, Key: key, Value: value, Session: id}},
	}
	rctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
	ok, resp, _, err := m.client.Txn().Txn(ops, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	switch {
	case err != nil:
		return fmt.Errorf("take member key: %w", classify(err))
	case !ok:
		return fmt.Errorf("take member key %s: %w (%s)", key, cluster.ErrIncarnationReused, txnErrors(resp))
	}
	var joinIndex uint64
	for _, r := range resp.Results {
		if r != nil && r.KV != nil && r.KV.Key == key {
			joinIndex = r.KV.ModifyIndex
		}
	}
	m.SetJoinEpoch(joinIndex)
	m.Renewed(sent)

	reg := &api.AgentServiceRegistration{
		ID:   m.serviceID,
		Name: m.cfg.serviceName(),
		Tags: m.self.Kinds,
		Meta: map[string]string{
			"member_id":   truncate(m.self.ID, 512),
			"incarnation": strconv.FormatUint(m.self.Incarnation, 10),
			"weight":      strconv.FormatUint(uint64(m.self.EffectiveWeight()), 10),
			"address":     truncate(m.self.Address, 512),
		},
		Check: &api.AgentServiceCheck{
			CheckID:                        m.checkID,
			Name:                           "fraktor membership lease",
			TTL:                            m.cfg.SessionTTL.String(),
			Status:                         api.HealthPassing,
			DeregisterCriticalServiceAfter: m.cfg.DeregisterCriticalAfter.String(),
		},
	}
	if host, port, err := net.SplitHostPort(m.self.Address); err == nil {
		if p, err := strconv.Atoi(port); err == nil && p > 0 && p < 65536 {
			reg.Address, reg.Port = host, p
		}
	}
	rctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
	err = m.client.Agent().ServiceRegisterOpts(reg, api.ServiceRegisterOpts{ReplaceExistingChecks: true}.WithContext(rctx))
	cancel()
	if err != nil {
		return fmt.Errorf("register service %s: %w", m.serviceID, classify(err))
	}
	return nil
}

// classify wraps a Consul client error with ErrUnreachable (no answer) or
// ErrRequestFailed (an error answer).
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return err
	}
	var ue *url.Error
	if errors.As(err, &ue) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: %w", ErrUnreachable, err)
	}
	return fmt.Errorf("%w: %w", ErrRequestFailed, err)
}

func txnErrors(resp *api.TxnResponse) string {
	if resp == nil || len(resp.Errors) == 0 {
		return "transaction rolled back"
	}
	s := ""
	for i, e := range resp.Errors {
		if i > 0 {
			s += "; "
		}
		s += fmt.Sprintf("op %d: %s", e.OpIndex, e.What)
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// shortID abbreviates a session ID for logs (it is not a secret, but the
// full ID adds nothing to a log line).
func shortID(id string) string { return truncate(id, 8) }
