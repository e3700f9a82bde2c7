package consul

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

// Provider is the Consul membership provider. It holds one Consul client
// for all the memberships joined through it, and one view watcher (a
// single blocking query) that runs while any of them is active; each
// membership adds its renewal and service-check goroutines. With a client
// it builds itself (Config.API.HttpClient nil), the Provider opens at most
// maxAgentConns connections to the agent, so one process stays far below
// Consul's per-client-address connection limit (http_max_conns_per_client,
// 200 by default) however many members it hosts. Create one Provider per
// process and cluster. Safe for concurrent use.
type Provider struct {
	cfg       Config
	client    *api.Client
	closeIdle func()

	mu    sync.Mutex
	watch *watcher
}

// maxAgentConns bounds the connections a Provider's own client opens to the
// agent: one for the view query, the rest for renewals and joins.
const maxAgentConns = 8

var (
	_ cluster.Provider     = (*Provider)(nil)
	_ cluster.ClusterNamer = (*Provider)(nil)
)

// ClusterName returns Config.Cluster, the name under which the provider
// lists members. The cluster runtime refuses to install when it differs
// from cluster.Config.Name (cluster.ClusterNamer).
func (p *Provider) ClusterName() string { return p.cfg.Cluster }

// New validates cfg and returns a provider. It does not contact Consul.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	client, closeIdle, err := newClient(cfg.API)
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, client: client, closeIdle: closeIdle}, nil
}

// attach subscribes m to the provider's view watcher, starting it if none
// runs.
func (p *Provider) attach(m *membership) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch == nil {
		p.watch = startWatcher(p.cfg, p.cfg.logger().With("cluster", p.cfg.Cluster), p.client)
	}
	p.watch.add(m)
}

// closeIdleIfUnused closes the idle agent connections when no membership
// is active (after a failed Join).
func (p *Provider) closeIdleIfUnused() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.watch == nil {
		p.closeIdle()
	}
}

// detach unsubscribes m; when it was the last membership, the watcher
// stops (waited for within ctx) and idle agent connections are closed, and
// detach returns the watcher's done channel (nil when others remain).
func (p *Provider) detach(ctx context.Context, m *membership) (<-chan struct{}, error) {
	p.mu.Lock()
	w := p.watch
	last := w != nil && w.remove(m)
	if last {
		p.watch = nil
		w.cancel()
	}
	p.mu.Unlock()
	if !last {
		return nil, nil
	}
	defer p.closeIdle()
	select {
	case <-w.done:
		return w.done, nil
	case <-ctx.Done():
		return w.done, fmt.Errorf("consul: waiting for the view watcher: %w", ctx.Err())
	}
}

// Join implements cluster.Provider. It creates the session (its creation
// starts the lease: the deadline is its send time plus FencePeriod), then
// registers the incarnation durably and takes the member key with the
// session in one transaction (see takeKey): incarnations of an ID must grow,
// so an incarnation at or below the highest one the ID ever registered is
// refused with an error wrapping cluster.ErrIncarnationReused, whether the
// old one crashed or left and however long ago; a member key still in
// Consul's lock delay gives ErrLockDelay. It then registers the service
// (and renews the session once when these requests took RenewInterval or
// more, so that the lease it returns is valid),
// starts the renewal and service-check goroutines and subscribes the membership to the
// Provider's view watcher (starting it when none runs). Each request is bounded by
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
	m := &membership{
		MembershipFeed: feed,
		provider:       p,
		cfg:            cfg,
		log:            log,
		client:         p.client,
		keys:           newKeyspace(cfg.KeyPrefix, cfg.Cluster),
		self:           self,
		serviceID:      fmt.Sprintf("fraktor-%s-%s-%d", cfg.Cluster, url.PathEscape(self.ID), self.Incarnation),
		checks:         make(chan struct{}, 1),
		term:           make(chan struct{}),
	}
	m.checkID = m.serviceID + ":lease"
	if err := m.register(ctx); err != nil {
		p.closeIdleIfUnused()
		return nil, fmt.Errorf("consul: join %s at %s: %w", self.Key(), cfg.API.Address, err)
	}
	loopCtx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	m.wg.Go(func() { m.renewLoop(loopCtx) })
	m.wg.Go(func() { m.checkLoop(loopCtx) })
	p.attach(m)
	log.Info("consul: member joined", "session", shortID(m.session))
	return m, nil
}

// newClient builds a client from a copy of c. Without a given HttpClient,
// the transport (c.Transport or the Consul default) is cloned, so that the
// Provider owns and can close its connections, and limited to
// maxAgentConns connections.
func newClient(c api.Config) (*api.Client, func(), error) {
	if c.HttpClient == nil {
		if c.Transport == nil {
			c.Transport = api.DefaultConfig().Transport
		}
		c.Transport = c.Transport.Clone()
		c.Transport.MaxConnsPerHost = maxAgentConns
		c.Transport.MaxIdleConnsPerHost = maxAgentConns
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
	if at, ok := m.found(ctx); ok {
		m.SetFounded(at)
	}
	resp, err := m.takeKey(ctx, value)
	if err != nil {
		return err
	}
	key := m.keys.member(m.self)
	var joinIndex uint64
	for _, r := range resp.Results {
		if r != nil && r.KV != nil && r.KV.Key == key {
			joinIndex = r.KV.ModifyIndex
		}
	}
	m.joinIndex = joinIndex
	m.SetJoinEpoch(joinIndex)
	m.Renewed(sent)

	m.reg = &api.AgentServiceRegistration{
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
			m.reg.Address, m.reg.Port = host, p
		}
	}
	rctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
	err = m.client.Agent().ServiceRegisterOpts(m.reg, api.ServiceRegisterOpts{ReplaceExistingChecks: true}.WithContext(rctx))
	cancel()
	if err != nil {
		return fmt.Errorf("register service %s: %w", m.serviceID, classify(err))
	}
	// The lease counts from the session's creation. When the requests since
	// took RenewInterval or more (a slow agent, each answer within
	// RequestTimeout), renew once, so that Join returns a lease as fresh as
	// the renewals keep it, not one near or past its deadline
	// (TestConsulSlowJoinReturnsValidLease). An answer at least SessionTTL
	// after the creation proves nothing (see renewLoop): Join fails.
	if time.Since(sent) < m.cfg.RenewInterval {
		return nil
	}
	if err := m.renewOnce(ctx, sent); err != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), m.cfg.RequestTimeout)
		defer cancel()
		_ = m.client.Agent().ServiceDeregisterOpts(m.serviceID, (&api.QueryOptions{}).WithContext(rctx))
		return err
	}
	return nil
}

// renewOnce renews the session for register, which created it at created.
func (m *membership) renewOnce(ctx context.Context, created time.Time) error {
	sent := time.Now()
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	entry, _, err := m.client.Session().Renew(m.session, (&api.WriteOptions{}).WithContext(rctx))
	cancel()
	switch {
	case err != nil:
		return fmt.Errorf("renew session: %w", classify(err))
	case entry == nil:
		return fmt.Errorf("renew session: %w", ErrSessionInvalidated)
	case time.Since(created) >= m.cfg.SessionTTL:
		return fmt.Errorf("renew session: answered %v after its creation: %w", time.Since(created).Round(time.Millisecond), errUnconfirmed)
	}
	m.Renewed(sent)
	return nil
}

// found reports whether this incarnation founds its cluster, and when
// (taken before its first request was sent): it creates the cluster's
// founded record, check-and-set on its absence, and then finds no
// incarnation record under the prefix (those are never deleted, so a
// cluster that ran before the founded record existed has some). Every
// later Join finds the record, so at most one incarnation ever founds a
// cluster, and every other one registered after at. Any failure counts as
// not founding: the member then waits out W like any joiner, the safe
// side. The record stays when the Join fails afterwards; the cluster then
// has no founder. See cluster.MembershipFeed.Founded.
func (m *membership) found(ctx context.Context) (time.Time, bool) {
	at := time.Now()
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	created, _, err := m.client.KV().CAS(&api.KVPair{Key: m.keys.founded(), Value: []byte(m.self.Key())},
		(&api.WriteOptions{}).WithContext(rctx))
	if err != nil || !created {
		return time.Time{}, false
	}
	keys, _, err := m.client.KV().Keys(m.keys.incarnations(), "", (&api.QueryOptions{RequireConsistent: true}).WithContext(rctx))
	if err != nil || len(keys) > 0 {
		m.log.Debug("consul: the founded record was missing in a cluster that ran before", "err", err, "incarnation records", len(keys))
		return time.Time{}, false
	}
	return at, true
}

// takeKey registers the incarnation: one transaction raises the ID's
// incarnation record to it (check-and-set: it must be above the highest
// incarnation ever registered), checks that no released marker of it exists
// and locks the member key with the session. A record at the member key that
// no session holds is not a member (see decodeView) and is taken over,
// checking that it did not change. A concurrent Join of the same ID that
// moved the incarnation record first makes it read and try again.
func (m *membership) takeKey(ctx context.Context, value []byte) (*api.TxnResponse, error) {
	key := m.keys.member(m.self)
	incKey := m.keys.incarnation(m.self.ID)
	for attempt := 0; ; attempt++ {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		ok, resp, _, err := m.client.Txn().Txn(api.TxnOps{
			{KV: &api.KVTxnOp{Verb: api.KVGetOrEmpty, Key: incKey}},
			{KV: &api.KVTxnOp{Verb: api.KVGetOrEmpty, Key: key}},
		}, (&api.QueryOptions{RequireConsistent: true}).WithContext(rctx))
		cancel()
		if err != nil {
			return nil, fmt.Errorf("read incarnation record: %w", classify(err))
		}
		if !ok || len(resp.Results) != 2 {
			return nil, fmt.Errorf("read incarnation record: %w: %s", ErrRequestFailed, txnErrors(resp))
		}
		inc, cur := resp.Results[0].KV, resp.Results[1].KV
		if inc.ModifyIndex != 0 {
			highest, err := strconv.ParseUint(string(inc.Value), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: incarnation record %q: %v", ErrBadRecord, incKey, err)
			}
			if m.self.Incarnation <= highest {
				return nil, fmt.Errorf("%w: incarnation %d of %q is not above %d, the highest one registered",
					cluster.ErrIncarnationReused, m.self.Incarnation, m.self.ID, highest)
			}
		}
		memberCheck := &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: key}
		if cur.ModifyIndex != 0 {
			if cur.Session != "" {
				return nil, fmt.Errorf("take member key %s: %w (held by a live session)", key, cluster.ErrIncarnationReused)
			}
			memberCheck = &api.KVTxnOp{Verb: api.KVCheckIndex, Key: key, Index: cur.ModifyIndex}
		}
		ops := api.TxnOps{
			{KV: &api.KVTxnOp{Verb: api.KVCAS, Key: incKey, Index: inc.ModifyIndex, Value: []byte(strconv.FormatUint(m.self.Incarnation, 10))}},
			{KV: &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: m.keys.releasedKey(m.self)}},
			{KV: memberCheck},
			{KV: &api.KVTxnOp{Verb: api.KVLock, Key: key, Value: value, Session: m.session}},
		}
		rctx, cancel = context.WithTimeout(ctx, m.cfg.RequestTimeout)
		ok, resp, _, err = m.client.Txn().Txn(ops, (&api.QueryOptions{}).WithContext(rctx))
		cancel()
		switch {
		case err != nil:
			return nil, fmt.Errorf("take member key: %w", classify(err))
		case ok:
			return resp, nil
		case txnFailedAt(resp, 0) && attempt < 3:
			continue // the incarnation record moved: read it again
		case txnFailedAt(resp, 3) && strings.Contains(txnErrors(resp), "lock delay"):
			return nil, fmt.Errorf("take member key %s: %w (%s)", key, ErrLockDelay, txnErrors(resp))
		}
		return nil, fmt.Errorf("take member key %s: %w (%s)", key, cluster.ErrIncarnationReused, txnErrors(resp))
	}
}

// txnFailedAt reports whether the transaction failed at operation i.
func txnFailedAt(resp *api.TxnResponse, i int) bool {
	if resp == nil {
		return false
	}
	for _, e := range resp.Errors {
		if e.OpIndex == i {
			return true
		}
	}
	return false
}

// classify wraps a Consul client error with ErrUnreachable (no answer) or
// ErrRequestFailed (an error answer; also ErrRateLimited for a 429).
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
	// Most calls return an api.StatusError; Session().Renew formats a plain
	// error with the same text.
	var se api.StatusError
	if (errors.As(err, &se) && se.Code == http.StatusTooManyRequests) ||
		strings.HasPrefix(err.Error(), "Unexpected response code: 429") {
		return fmt.Errorf("%w: %w: %w", ErrRequestFailed, ErrRateLimited, err)
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

// truncate cuts s to at most n bytes on a rune boundary. Cut inside a rune,
// the JSON encoder would replace the broken bytes with U+FFFD (3 bytes), and
// a service meta value of 512 bytes would grow past Consul's limit: the
// agent refused the registration (TestConsulLongMultibyteIDJoins).
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// shortID abbreviates a session ID for logs (it is not a secret, but the
// full ID adds nothing to a log line).
func shortID(id string) string { return truncate(id, 8) }
