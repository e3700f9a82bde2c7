package consul

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/backoff"
)

// membership is one incarnation's Consul membership: the embedded feed is
// the consumer side; renewLoop and watchLoop are its two goroutines.
type membership struct {
	*cluster.MembershipFeed

	cfg       Config
	log       *slog.Logger
	client    *api.Client
	closeIdle func()
	keys      keyspace
	self      cluster.Member
	serviceID string
	checkID   string
	session   string

	cancel context.CancelFunc
	wg     sync.WaitGroup

	// badKeys maps the skipped keys of the last view to their
	// ModifyIndex, so that each bad record is logged once (watchLoop only).
	badKeys map[string]uint64

	mu    sync.Mutex
	ended bool
}

// renewLoop renews the session every RenewInterval (measured from the last
// send) and feeds the outcome to the lease. A failed renewal is retried
// after a jittered backoff capped at RenewInterval; a session the servers no
// longer know revokes the lease and ends the loop.
//
// A renewal answered at least SessionTTL after the send time of the last
// acknowledged one does not restore the lease: the servers' TTL timer may
// have fired already (an agent frozen and resumed answers the queued
// renewal and invalidates the session a moment later). The lease stays
// lost until the next renewal, sent after that answer, succeeds and a
// consistent read still finds the session.
func (m *membership) renewLoop(ctx context.Context) {
	failures := 0
	next := m.cfg.RenewInterval
	lastAck := m.Lease().Renewed
	confirming := false
	for {
		if !waitCtx(ctx, next) {
			return
		}
		sent := time.Now()
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		entry, _, err := m.client.Session().Renew(m.session, (&api.WriteOptions{}).WithContext(rctx))
		cancel()
		if ctx.Err() != nil {
			return
		}
		retry := func(err error) {
			failures++
			m.RenewalFailed(fmt.Errorf("%w: %w", cluster.ErrRenewalFailed, err))
			next = min(backoff.Jittered(failures, m.cfg.BackoffBase, m.cfg.BackoffMax), m.cfg.RenewInterval)
		}
		switch {
		case err != nil:
			retry(classify(err))
		case entry == nil:
			// A server that just became leader may answer before it has
			// replayed its log; only a consistent read can say "gone".
			if exists, err := m.sessionExists(ctx); exists || err != nil {
				retry(fmt.Errorf("session not found, not confirmed: %w", cmp.Or(err, errSessionStillFound)))
				break
			}
			m.Revoke(fmt.Errorf("%w: %w: session %s", cluster.ErrLeaseRevoked, ErrSessionInvalidated, shortID(m.session)))
			return
		case time.Since(lastAck) >= m.cfg.SessionTTL:
			gap := time.Since(lastAck)
			lastAck, confirming = sent, true
			m.log.Info("consul: renewal after a gap of at least the session TTL; confirming the session first", "gap", gap)
			retry(fmt.Errorf("renewal answered %v after the last acknowledged one: %w", gap.Round(time.Millisecond), errUnconfirmed))
			next = max(0, m.cfg.RenewInterval-time.Since(sent))
		case confirming:
			lastAck = sent
			exists, err := m.sessionExists(ctx)
			if err != nil {
				retry(fmt.Errorf("%w: %w", errUnconfirmed, err))
				break
			}
			if !exists {
				m.Revoke(fmt.Errorf("%w: %w: session %s", cluster.ErrLeaseRevoked, ErrSessionInvalidated, shortID(m.session)))
				return
			}
			confirming = false
			fallthrough
		default:
			lastAck = sent
			failures = 0
			m.Renewed(sent)
			m.passCheck(ctx)
			next = max(0, m.cfg.RenewInterval-time.Since(sent))
		}
		if m.Revoked() {
			return
		}
	}
}

var (
	errSessionStillFound = errors.New("consul: a consistent read still finds the session")
	errUnconfirmed       = errors.New("consul: session not confirmed after a renewal gap")
)

// sessionExists asks with a consistent read (answered only by a leader
// whose state is up to date) whether the servers know the session.
func (m *membership) sessionExists(ctx context.Context) (bool, error) {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	entry, _, err := m.client.Session().Info(m.session, (&api.QueryOptions{RequireConsistent: true}).WithContext(rctx))
	if err != nil {
		return false, classify(err)
	}
	return entry != nil, nil
}

// passCheck refreshes the service's TTL check on the local agent. It is for
// discovery and operator UIs only, so a failure is just logged.
func (m *membership) passCheck(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	if err := m.client.Agent().UpdateTTLOpts(m.checkID, "lease renewed", api.HealthPassing, (&api.QueryOptions{}).WithContext(rctx)); err != nil && ctx.Err() == nil {
		m.log.Debug("consul: service check update failed", "err", err)
	}
}

// watchLoop runs consistent blocking queries on the cluster prefix and
// publishes each view. A query lasts at most FencePeriod (see
// Config.viewTiming), so a stalled agent is reported stale within the fence
// period. After an error the view is stale, the next query does not block
// (index 0) so that recovery is seen at once, and the loop backs off.
func (m *membership) watchLoop(ctx context.Context) {
	var index uint64
	var epochs epochTracker
	failures := 0
	wait, queryTimeout := m.cfg.viewTiming()
	for {
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		// Consistent: a leader that has not caught up with its log (just
		// after a restart) refuses instead of serving an old view.
		q := &api.QueryOptions{WaitIndex: index, WaitTime: wait, RequireConsistent: true}
		pairs, meta, err := m.client.KV().List(m.keys.root, q.WithContext(qctx))
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			failures++
			m.ViewFailed(classify(err))
			index = 0
			if !waitCtx(ctx, backoff.Jittered(failures, m.cfg.BackoffBase, m.cfg.BackoffMax)) {
				return
			}
			continue
		}
		failures = 0
		epoch, regressed, from := epochs.observe(meta.LastIndex)
		if regressed {
			m.EpochRegressed(from, meta.LastIndex)
		}
		members, released, stale := m.decodeView(pairs)
		if err := m.Publish(cluster.NewTopology(epoch, members), released); err != nil && !errors.Is(err, cluster.ErrMembershipEnded) {
			m.log.Warn("consul: view not delivered", "err", err)
		}
		m.deleteStale(ctx, stale)
		// Consul's guidance: never block on index 0, and reset when it
		// goes back (observe has already re-based the epochs).
		index = max(meta.LastIndex, 1)
	}
}

// decodeView converts the KV pairs of the cluster prefix into members and
// released markers; it also returns the released markers older than
// ReleasedRetention. A member key that no session holds is not a member: only
// a live session keeps a key under members/ (the servers delete it with the
// session), so a record without one was written by someone else (an
// operator, a KV import) and would never expire. Records that do not decode
// and member keys without a session are skipped and logged once per key and
// version.
func (m *membership) decodeView(pairs api.KVPairs) (members, released []cluster.Member, stale []*api.KVPair) {
	seen := make(map[string]uint64, len(m.badKeys))
	defer func() { m.badKeys = seen }()
	for _, p := range pairs {
		var prefix string
		switch {
		case strings.HasPrefix(p.Key, m.keys.members()):
			prefix = m.keys.members()
		case strings.HasPrefix(p.Key, m.keys.released()):
			prefix = m.keys.released()
		default:
			continue
		}
		mem, releasedAt, err := decodeRecord(strings.TrimPrefix(p.Key, prefix), p.Value)
		if err == nil && prefix == m.keys.members() && p.Session == "" {
			err = fmt.Errorf("%w: member key %q is held by no session", ErrBadRecord, p.Key)
		}
		if err != nil {
			if idx, ok := m.badKeys[p.Key]; !ok || idx != p.ModifyIndex {
				m.log.Warn("consul: skipping record", "key", p.Key, "err", err)
			}
			seen[p.Key] = p.ModifyIndex
			continue
		}
		if prefix == m.keys.members() {
			members = append(members, mem)
			continue
		}
		released = append(released, mem)
		if m.cfg.ReleasedRetention > 0 && !releasedAt.IsZero() && time.Since(releasedAt) > m.cfg.ReleasedRetention {
			stale = append(stale, p)
		}
	}
	return members, released, stale
}

// deleteStale removes expired released markers (best effort; any member may
// do it, check-and-set keeps a newer write).
func (m *membership) deleteStale(ctx context.Context, stale []*api.KVPair) {
	for _, p := range stale {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		_, _, err := m.client.KV().DeleteCAS(p, (&api.WriteOptions{}).WithContext(rctx))
		cancel()
		if err != nil {
			m.log.Debug("consul: released marker not deleted", "key", p.Key, "err", err)
		}
	}
}

// epochTracker turns the blocking queries' indexes into epochs that only
// grow: normally the index itself; after the index went back, the index
// plus an offset that puts the new epoch just above the last one.
type epochTracker struct {
	lastIndex, lastEpoch, offset uint64
}

// observe returns the epoch for index and, when index is below the previous
// one, regressed=true and the previous index.
func (e *epochTracker) observe(index uint64) (epoch uint64, regressed bool, from uint64) {
	if index < e.lastIndex {
		regressed, from = true, e.lastIndex
		e.offset = e.lastEpoch + 1 - index
	}
	e.lastIndex = index
	epoch = index + e.offset
	e.lastEpoch = max(e.lastEpoch, epoch)
	return epoch, regressed, from
}

// begin marks the membership as ending; false if it already ended.
func (m *membership) begin() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended {
		return false
	}
	m.ended = true
	return true
}

// stopLoops cancels the goroutines and waits for them within ctx.
func (m *membership) stopLoops(ctx context.Context) error {
	m.cancel()
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("consul: waiting for the membership goroutines: %w", ctx.Err())
	}
}

// Leave implements cluster.Membership. In order: the lease is released
// locally; the goroutines end; one transaction checks that the session
// still holds the member key, writes the released marker and deletes the
// key (skipped when the lease was revoked: nothing is left to release);
// the session is destroyed and the service deregistered; the stream ends.
// Each request is bounded by RequestTimeout and ctx. Errors are joined; the
// membership ends whatever happens.
func (m *membership) Leave(ctx context.Context) error {
	if !m.begin() {
		return cluster.ErrMembershipEnded
	}
	revoked := m.Revoked()
	m.Release()
	defer m.closeIdle()
	defer m.End()
	var errs []error
	if err := m.stopLoops(ctx); err != nil {
		errs = append(errs, err)
	}
	if !revoked {
		if err := m.releaseKey(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	if err := m.destroySession(ctx); err != nil {
		errs = append(errs, err)
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	err := m.client.Agent().ServiceDeregisterOpts(m.serviceID, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	if err != nil {
		errs = append(errs, fmt.Errorf("consul: deregister service %s: %w", m.serviceID, classify(err)))
	}
	if len(errs) == 0 {
		m.log.Info("consul: member left")
	}
	return errors.Join(errs...)
}

func (m *membership) releaseKey(ctx context.Context) error {
	value, err := encodeRecord(m.self, time.Now())
	if err != nil {
		return err
	}
	key := m.keys.member(m.self)
	ops := api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckSession, Key: key, Session: m.session}},
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: m.keys.releasedKey(m.self), Value: value}},
		{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: key}},
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	ok, resp, _, err := m.client.Txn().Txn(ops, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	switch {
	case err != nil:
		return fmt.Errorf("consul: leave %s: release: %w", m.self.Key(), classify(err))
	case !ok:
		// The session lost the key meanwhile: the servers already dropped
		// this incarnation, so there is nothing left to release.
		m.log.Info("consul: member key already gone at leave", "detail", txnErrors(resp))
	}
	return nil
}

func (m *membership) destroySession(ctx context.Context) error {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	if _, err := m.client.Session().Destroy(m.session, (&api.WriteOptions{}).WithContext(rctx)); err != nil {
		return fmt.Errorf("consul: destroy session %s: %w", shortID(m.session), classify(err))
	}
	return nil
}

// Stop implements cluster.Membership: the goroutines end and the stream
// closes, but the session, key and service stay; the servers invalidate
// the session (deleting the key) within 2×SessionTTL, and the agent reaps
// the service DeregisterCriticalAfter after its check went critical.
func (m *membership) Stop(ctx context.Context) error {
	if !m.begin() {
		return nil
	}
	defer m.closeIdle()
	defer m.End()
	return m.stopLoops(ctx)
}
