package consul

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
)

var _ cluster.Retirer = (*membership)(nil)

// retireState is what Retire has done so far; membership.retireMu.
type retireState struct {
	marked  bool // the released marker is written and the member key gone
	session bool // the session is destroyed
	done    bool // and the service deregistered: Retire succeeded
}

// Retire implements cluster.Retirer: the membership ends as Stop ends it
// (if it has not), then, each step done once and retried by a later call
// when it failed: one transaction checks that the session still holds the
// member key, writes the released marker and deletes the key, as Leave
// does; when the session no longer holds it (the servers invalidated the
// session: the incarnation is gone from the views already), the marker is
// written provided no member key of the incarnation exists, so that the
// others stop waiting W for it; the session is destroyed; the service is
// deregistered (an agent that no longer knows it counts as done). Each
// request is bounded by RequestTimeout and ctx; the first that fails ends
// the call with its error (ErrUnreachable while the agent does not
// answer). Once every step succeeded it returns nil at once.
func (m *membership) Retire(ctx context.Context) error {
	m.Release() // the lease is given up (a no-op once the membership ended)
	if err := m.Stop(ctx); err != nil {
		m.log.Debug("consul: stop before retire", "err", err)
	}
	m.retireMu.Lock()
	defer m.retireMu.Unlock()
	st := &m.retire
	if st.done {
		return nil
	}
	if !st.marked {
		if err := m.retireKey(ctx); err != nil {
			return err
		}
		st.marked = true
	}
	if !st.session {
		if err := m.destroySession(ctx); err != nil {
			return err
		}
		st.session = true
	}
	rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
	err := m.client.Agent().ServiceDeregisterOpts(m.serviceID, (&api.QueryOptions{}).WithContext(rctx))
	cancel()
	if se := (api.StatusError{}); errors.As(err, &se) && se.Code == http.StatusNotFound {
		err = nil // the agent reaped it already
	}
	if err != nil {
		return fmt.Errorf("consul: retire %s: deregister service %s: %w", m.self.Key(), m.serviceID, classify(err))
	}
	st.done = true
	m.log.Info("consul: fenced member retired")
	return nil
}

// retireKey writes the released marker: with the member key's deletion
// while the session holds it, alone when no member key of the incarnation
// is left.
func (m *membership) retireKey(ctx context.Context) error {
	value, err := encodeRecord(m.self, time.Now())
	if err != nil {
		return err
	}
	key, marker := m.keys.member(m.self), m.keys.releasedKey(m.self)
	txn := func(ops api.TxnOps) (bool, *api.TxnResponse, error) {
		rctx, cancel := context.WithTimeout(ctx, m.cfg.RequestTimeout)
		defer cancel()
		ok, resp, _, err := m.client.Txn().Txn(ops, (&api.QueryOptions{}).WithContext(rctx))
		if err != nil {
			return false, nil, fmt.Errorf("consul: retire %s: release: %w", m.self.Key(), classify(err))
		}
		return ok, resp, nil
	}
	ok, _, err := txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckSession, Key: key, Session: m.session}},
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: marker, Value: value}},
		{KV: &api.KVTxnOp{Verb: api.KVDelete, Key: key}},
	})
	if err != nil || ok {
		return err
	}
	ok, resp, err := txn(api.TxnOps{
		{KV: &api.KVTxnOp{Verb: api.KVCheckNotExists, Key: key}},
		{KV: &api.KVTxnOp{Verb: api.KVSet, Key: marker, Value: value}},
	})
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%w: retire %s: the member key is held by another session (%s)", ErrRequestFailed, m.self.Key(), txnErrors(resp))
	}
	m.log.Info("consul: member key gone before retire; released marker written")
	return nil
}
