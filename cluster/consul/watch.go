package consul

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/consul/api"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/backoff"
)

// watcher runs the one view query of a Provider and fans each view out to
// the memberships joined through it, so that a process holds one blocking
// query (one agent connection) however many members it hosts. It runs while
// at least one membership is subscribed; the Provider starts it at the
// first subscription and stops it when the last one ends.
//
// The epoch of a view is the query's index plus the epoch base, a number
// kept in the cluster's KV prefix and read with the view, so every member
// (later joiners included) computes the same epoch for the same view. When
// the index goes back (a snapshot restore, or the servers reaping the
// tombstones of deleted keys: docs/membership.md), the watcher does not
// deliver the view: it raises the base with a check-and-set so that the
// next view's epoch is above every epoch it delivered, and members that
// saw the regression race only to raise it further.
type watcher struct {
	cfg    Config
	log    *slog.Logger
	client *api.Client
	keys   keyspace
	cancel context.CancelFunc
	done   chan struct{}

	mu    sync.Mutex
	subs  map[*membership]struct{}
	last  *view // the last delivered view; nil before the first
	stale error // the failure since the last delivered view; nil while live

	// Owned by run.
	badKeys   map[string]uint64 // skipped key -> ModifyIndex, logged once
	lastEpoch uint64
	lastHash  uint64
}

// view is one delivered listing.
type view struct {
	index    uint64 // the query's raw index
	top      cluster.Topology
	released []cluster.Member
}

func startWatcher(cfg Config, log *slog.Logger, client *api.Client) *watcher {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watcher{
		cfg: cfg, log: log, client: client, keys: newKeyspace(cfg.KeyPrefix, cfg.Cluster),
		cancel: cancel, done: make(chan struct{}), subs: make(map[*membership]struct{}),
	}
	go func() {
		defer close(w.done)
		w.run(ctx)
	}()
	return w
}

// add subscribes m and hands it the last view at once when that view
// already includes m's registration, and the watcher's staleness: a feed
// starts live, and a membership that joins while the view query fails
// must not report a live view until a query succeeds (the runtime trusts
// a live view for placement; TestConsulJoinWhileViewStaleStartsStale).
func (w *watcher) add(m *membership) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[m] = struct{}{}
	if w.last != nil && w.last.index >= m.joinIndex {
		w.deliver(m, w.last)
	}
	if w.stale != nil {
		m.ViewFailed(w.stale)
	}
}

// remove unsubscribes m and reports whether none is left.
func (w *watcher) remove(m *membership) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.subs, m)
	return len(w.subs) == 0
}

// deliver publishes v to m unless v predates m's registration; w.mu held.
func (w *watcher) deliver(m *membership, v *view) {
	if v.index < m.joinIndex {
		return
	}
	if err := m.Publish(v.top, v.released); err != nil && !errors.Is(err, cluster.ErrMembershipEnded) {
		m.log.Warn("consul: view not delivered", "err", err)
	}
}

func (w *watcher) publish(v *view) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.last, w.stale = v, nil
	for m := range w.subs {
		w.deliver(m, v)
	}
}

func (w *watcher) failed(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.stale = err
	for m := range w.subs {
		m.ViewFailed(err)
	}
}

func (w *watcher) regressed(from, to uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for m := range w.subs {
		m.EpochRegressed(from, to)
	}
}

// run is the view loop: consistent blocking queries on the cluster prefix.
// A query lasts at most FencePeriod (see Config.viewTiming), so a stalled
// agent is reported stale within the fence period; so is one that stops
// answering the loop's writes (raiseBase, deleteStale), which are bounded
// by RequestTimeout and end the iteration as a failed query. After an
// error the view is stale, the next query does not block (index 0) so
// that recovery is seen at once, and the loop backs off (viewBackoff: only
// a blocking query's success ends the backoff; a plain one's forgives the
// failures of an outage).
func (w *watcher) run(ctx context.Context) {
	var index uint64
	var fails viewBackoff
	// fail reports a failed request of the loop (the view is stale), makes
	// the next query a plain one and waits out the backoff; false when ctx
	// ended.
	fail := func(err error, blocking bool) bool {
		attempt := fails.failed(blocking)
		w.failed(err)
		index = 0
		return waitCtx(ctx, backoff.Jittered(attempt, w.cfg.BackoffBase, w.cfg.BackoffMax))
	}
	wait, queryTimeout := w.cfg.viewTiming()
	for {
		qctx, cancel := context.WithTimeout(ctx, queryTimeout)
		// Consistent: a leader that has not caught up with its log (just
		// after a restart) refuses instead of serving an old view.
		q := &api.QueryOptions{WaitIndex: index, WaitTime: wait, RequireConsistent: true}
		pairs, meta, err := w.client.KV().List(w.keys.root, q.WithContext(qctx))
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			if !fail(classify(err), q.WaitIndex != 0) {
				return
			}
			continue
		}
		fails.succeeded(q.WaitIndex != 0)
		members, released, stale, base := w.decode(pairs, meta.LastIndex)
		top := cluster.NewTopology(meta.LastIndex+base.value, members)
		if w.lastEpoch > 0 && (top.Epoch < w.lastEpoch || (top.Epoch == w.lastEpoch && top.Hash != w.lastHash)) {
			w.log.Warn("consul: view epoch regressed; raising the epoch base", "from", w.lastEpoch, "to", top.Epoch, "index", meta.LastIndex)
			w.regressed(w.lastEpoch, top.Epoch)
			// The write (or a concurrent one by another process) changes
			// the prefix, which ends the next blocking query.
			if err := w.raiseBase(ctx, base, w.lastEpoch+1-meta.LastIndex); err != nil {
				if !fail(err, false) {
					return
				}
				continue
			}
			index = meta.LastIndex
			if !waitCtx(ctx, backoff.Jittered(1, w.cfg.BackoffBase, w.cfg.BackoffMax)) {
				return
			}
			continue
		}
		w.lastEpoch, w.lastHash = top.Epoch, top.Hash
		w.publish(&view{index: meta.LastIndex, top: top, released: released})
		if err := w.deleteStale(ctx, stale); err != nil {
			if !fail(err, false) {
				return
			}
			continue
		}
		// Consul's guidance: never block on index 0.
		index = max(meta.LastIndex, 1)
	}
}

// epochBase is the epoch base record as read with a view. A record that
// is not a usable base has value 0 and keeps its modifyIndex, so that
// raiseBase can replace it.
type epochBase struct {
	value       uint64
	modifyIndex uint64 // 0: no record
}

// raiseBase sets the epoch base to want unless it is already at least that
// (check-and-set against the base read with the view; losing the race to
// another member is fine, the next view is checked again). It returns the
// error of a request the agent did not answer, so that the loop reports the
// view stale at once, not a RequestTimeout and a query later than the
// FencePeriod it promises (TestConsulStallDuringBaseRaiseReportedWithinFence).
func (w *watcher) raiseBase(ctx context.Context, base epochBase, want uint64) error {
	if want <= base.value {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
	defer cancel()
	ok, _, err := w.client.KV().CAS(&api.KVPair{
		Key: w.keys.epochBase(), Value: []byte(strconv.FormatUint(want, 10)), ModifyIndex: base.modifyIndex,
	}, (&api.WriteOptions{}).WithContext(rctx))
	switch {
	case err != nil:
		if err = classify(err); errors.Is(err, ErrUnreachable) {
			return err
		}
		w.log.Warn("consul: epoch base not raised", "err", err)
	case !ok:
		w.log.Debug("consul: epoch base changed meanwhile")
	}
	return nil
}

// decode converts the KV pairs of the cluster prefix into members, released
// markers, the released markers older than ReleasedRetention and the epoch
// base. A member key that no session holds is not a member: only a live
// session keeps a key under members/ (the servers delete it with the
// session), so a record without one was written by someone else (an
// operator, a KV import) and would never expire. Records that do not decode
// and member keys without a session are skipped and logged once per key and
// version, as are released markers of members in the view. An epoch base that is not a decimal number, or so large that
// index + base overflows (the epoch would wrap around), counts as no base.
func (w *watcher) decode(pairs api.KVPairs, index uint64) (members, released []cluster.Member, stale []*api.KVPair, base epochBase) {
	var releasedPairs []*api.KVPair
	seen := make(map[string]uint64, len(w.badKeys))
	defer func() { w.badKeys = seen }()
	skip := func(p *api.KVPair, err error) {
		if idx, ok := w.badKeys[p.Key]; !ok || idx != p.ModifyIndex {
			w.log.Warn("consul: skipping record", "key", p.Key, "err", err)
		}
		seen[p.Key] = p.ModifyIndex
	}
	for _, p := range pairs {
		var prefix string
		switch {
		case p.Key == w.keys.epochBase():
			base = epochBase{modifyIndex: p.ModifyIndex}
			v, err := strconv.ParseUint(string(p.Value), 10, 64)
			if err == nil && v > math.MaxUint64-index {
				err = fmt.Errorf("index %d + base overflows", index)
			}
			if err != nil {
				skip(p, fmt.Errorf("%w: epoch base %q: %v", ErrBadRecord, p.Value, err))
				continue
			}
			base.value = v
			continue
		case strings.HasPrefix(p.Key, w.keys.members()):
			prefix = w.keys.members()
		case strings.HasPrefix(p.Key, w.keys.released()):
			prefix = w.keys.released()
		default:
			continue
		}
		mem, releasedAt, err := decodeRecord(strings.TrimPrefix(p.Key, prefix), p.Value)
		if err == nil && prefix == w.keys.members() && p.Session == "" {
			err = fmt.Errorf("%w: member key %q is held by no session", ErrBadRecord, p.Key)
		}
		if err != nil {
			skip(p, err)
			continue
		}
		if prefix == w.keys.members() {
			members = append(members, mem)
			continue
		}
		released = append(released, mem)
		releasedPairs = append(releasedPairs, p)
		if w.cfg.ReleasedRetention > 0 && !releasedAt.IsZero() && time.Since(releasedAt) > w.cfg.ReleasedRetention {
			stale = append(stale, p)
		}
	}
	// A released marker of a member in the view is not one this provider
	// wrote (Leave writes the marker and deletes the key in one
	// transaction; Join refuses an incarnation with a marker). Passed on, it
	// would report a live member as gone, and the runtime's placement
	// barrier would stop waiting for it (TestConsulReleasedMarkerOfLiveMemberIgnored).
	if len(released) > 0 && len(members) > 0 {
		live := make(map[string]struct{}, len(members))
		for _, m := range members {
			live[m.Key()] = struct{}{}
		}
		kept := released[:0]
		for i, m := range released {
			if _, ok := live[m.Key()]; ok {
				skip(releasedPairs[i], fmt.Errorf("%w: released marker of %s, a live member", ErrBadRecord, m.Key()))
				continue
			}
			kept = append(kept, m)
		}
		released = kept
	}
	return members, released, stale, base
}

// deleteStale removes expired released markers (best effort; any member may
// do it, check-and-set keeps a newer write). The delete is a transaction so
// that the key travels in the body, not in a URL path where the agent's
// router would clean the dot segments of the IDs "." and ".."
// (TestConsulStaleReleasedMarkersOfOddIDsDeleted). It stops at a request
// the agent did not answer and returns its error, as raiseBase does
// (TestConsulStallDuringMarkerDeletesReportedWithinFence).
func (w *watcher) deleteStale(ctx context.Context, stale []*api.KVPair) error {
	for _, p := range stale {
		rctx, cancel := context.WithTimeout(ctx, w.cfg.RequestTimeout)
		ok, resp, _, err := w.client.Txn().Txn(api.TxnOps{{KV: &api.KVTxnOp{Verb: api.KVDeleteCAS, Key: p.Key, Index: p.ModifyIndex}}},
			(&api.QueryOptions{}).WithContext(rctx))
		cancel()
		switch {
		case err != nil:
			if err = classify(err); errors.Is(err, ErrUnreachable) {
				return err
			}
			w.log.Debug("consul: released marker not deleted", "key", p.Key, "err", err)
		case !ok:
			w.log.Debug("consul: released marker not deleted", "key", p.Key, "err", txnErrors(resp))
		}
	}
	return nil
}
