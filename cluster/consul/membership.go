package consul

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/backoff"
)

// membership is one incarnation's Consul membership: the embedded feed is
// the consumer side; renewLoop is its goroutine and the Provider's watcher
// publishes its views.
type membership struct {
	*cluster.MembershipFeed

	provider  *Provider
	cfg       Config
	log       *slog.Logger
	client    *api.Client
	keys      keyspace
	self      cluster.Member
	serviceID string
	checkID   string
	reg       *api.AgentServiceRegistration // the service registration, set by register
	session   string
	joinIndex uint64 // the raw view index at which the member key was taken

	cancel context.CancelFunc
	wg     sync.WaitGroup
	// term is closed once the renewal and service-check goroutines have
	// returned after Leave or Stop, and the view watcher too when this
	// membership was its last subscriber (Terminated).
	term chan struct{}
	// checks asks checkLoop to refresh the service check (one pending
	// request at most).
	checks chan struct{}

	mu    sync.Mutex
	ended bool

	// retireMu serialises Retire calls; it guards retire.
	retireMu sync.Mutex
	retire   retireState
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
// lost until the next renewal, sent after that answer, succeeds and the
// session still holds the member key in a write ordered after any pending
// invalidation (confirmSession).
func (m *membership) renewLoop(ctx context.Context) {
	failures := 0
	lastAck := m.Lease().Renewed
	// The first wait counts from the session's creation, whose send time
	// the lease deadline counts from too: Join's later requests may have
	// taken most of RenewInterval or more
	// (TestConsulSlowJoinRenewsBeforeDeadline).
	next := max(0, m.cfg.RenewInterval-time.Since(lastAck))
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
			exists, err := m.confirmSession(ctx)
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
			select {
			case m.checks <- struct{}{}:
			default: // an update is pending: it reports this renewal too
			}
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

// confirmSession re-takes the member key with the session in a
// transaction. It is a Raft write, so it is ordered after an invalidation
// the servers' overdue TTL timer has already submitted: a renewal or a read
// answered while that invalidation is still being committed finds the
// session, but this write does not. When the write fails, a consistent read
// says whether the session is gone.
func (m *membership) confirmSession(ctx context.Context) (bool, error) {
	value, err := encodeRecord(m.self, time.Time{})
	if err != nil {
		return false, err
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	ok, resp, _, err := m.client.Txn().Txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVLock, Key: m.keys.member(m.self), Value: value, Session: m.session}},
	}, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	switch {
	case err != nil:
		return false, classify(err)
	case ok:
		return true, nil
	}
	exists, err := m.sessionExists(ctx)
	if err == nil && exists {
		err = fmt.Errorf("consul: member key not re-taken (%s) but the session exists", txnErrors(resp))
	}
	return exists, err
}

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

// checkLoop refreshes the service check after each successful renewal. It
// is a goroutine of its own so that a check update that hangs (up to
// RequestTimeout) never delays the next renewal, which the lease timing
// counts on (TestConsulStalledCheckUpdateDoesNotDelayRenewals).
func (m *membership) checkLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-m.checks:
			m.passCheck(ctx)
		}
	}
}

// passCheck refreshes the service's TTL check on the local agent. It is for
// discovery and operator UIs only, so a failure is just logged. An agent
// that no longer knows the check (404: it restarted without its data
// directory, or an operator deregistered the service) gets the service
// registered again, so that discovery shows the member while it lives
// (TestConsulLostServiceRegisteredAgain).
func (m *membership) passCheck(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	defer cancel()
	err := m.client.Agent().UpdateTTLOpts(m.checkID, "lease renewed", api.HealthPassing, (&api.QueryOptions{}).WithContext(rctx))
	if se := (api.StatusError{}); errors.As(err, &se) && se.Code == http.StatusNotFound {
		err = m.client.Agent().ServiceRegisterOpts(m.reg, api.ServiceRegisterOpts{ReplaceExistingChecks: true}.WithContext(rctx))
		if err == nil {
			m.log.Info("consul: service registered again (the agent had lost it)", "service", m.serviceID)
		}
	}
	if err != nil && ctx.Err() == nil {
		m.log.Debug("consul: service check update failed", "err", err)
	}
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

// stopLoops cancels the renewal and check goroutines and waits for them
// within ctx. The returned channel is closed once they have returned.
func (m *membership) stopLoops(ctx context.Context) (<-chan struct{}, error) {
	m.cancel()
	done := make(chan struct{})
	go func() { //nolint: tracked by Terminated (linger)
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return done, nil
	case <-ctx.Done():
		return done, fmt.Errorf("consul: waiting for the membership goroutines: %w", ctx.Err())
	}
}

// linger closes m.term once loops is closed and, when this membership
// stopped the view watcher (watch not nil), the watcher has returned too;
// then the agent connections the watcher's last query left idle are closed.
// It returns at once: a Leave or Stop cut short by its ctx leaves those
// goroutines on their way out (an agent request that has not yet seen its
// cancellation, a transport that does not heed it), and Terminated tells
// when they have returned.
func (m *membership) linger(loops, watch <-chan struct{}) {
	go func() { //nolint: tracked by Terminated
		<-loops
		if watch != nil {
			<-watch
			m.provider.closeIdleIfUnused()
		}
		close(m.term)
	}()
}

// Terminated implements extension.Lingerer's contract for a membership:
// the channel is closed once every goroutine this membership started (its
// renewal and service-check loops, and the Provider's view watcher when
// this was its last membership) has returned after Leave or Stop, even
// when their ctx ended first. The cluster's Terminated, and so the actor
// system's, waits for it. It is open while the membership runs.
func (m *membership) Terminated() <-chan struct{} { return m.term }

// Leave implements cluster.Membership. In order: the lease is released
// locally; the renewal and service-check goroutines end; one transaction checks that the session
// still holds the member key, writes the released marker and deletes the
// key (skipped when the lease was revoked: nothing is left to release);
// the session is destroyed and the service deregistered; the membership
// stops receiving views (the last one of the Provider stops its watcher);
// the stream ends.
// Each request is bounded by RequestTimeout and ctx. Errors are joined; the
// membership ends whatever happens.
func (m *membership) Leave(ctx context.Context) error {
	if !m.begin() {
		return cluster.ErrMembershipEnded
	}
	revoked := m.Revoked()
	m.Release()
	defer m.End()
	var errs []error
	loops, err := m.stopLoops(ctx)
	if err != nil {
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
	err = m.client.Agent().ServiceDeregisterOpts(m.serviceID, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	if err != nil {
		errs = append(errs, fmt.Errorf("consul: deregister service %s: %w", m.serviceID, classify(err)))
	}
	watch, err := m.provider.detach(ctx, m)
	if err != nil {
		errs = append(errs, err)
	}
	m.linger(loops, watch)
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

// Stop implements cluster.Membership: the renewal and service-check
// goroutines end, the membership stops receiving views and the stream
// closes, but the session, key and service stay; the servers invalidate
// the session (deleting the key) within 2×SessionTTL, and the agent reaps
// the service DeregisterCriticalAfter after its check went critical.
func (m *membership) Stop(ctx context.Context) error {
	if !m.begin() {
		return nil
	}
	defer m.End()
	loops, lerr := m.stopLoops(ctx)
	watch, derr := m.provider.detach(ctx, m)
	m.linger(loops, watch)
	return errors.Join(lerr, derr)
}
