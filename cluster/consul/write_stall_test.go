package consul

import (
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// stallOnWrite is an HTTP transport that, once armed, stops answering KV
// and transaction requests from the first KV write the watcher sends (a
// released marker's delete, an epoch base raise): an agent that stops
// answering at that moment. Hung requests wait for their context or for
// resume; the stall's start is reported on stalled.
type stallOnWrite struct {
	*cuttable
	armed    atomic.Bool
	hanging  atomic.Bool
	stalled  chan time.Time
	resume   chan struct{}
	resumeMu sync.Once
}

func newStallOnWrite() *stallOnWrite {
	return &stallOnWrite{cuttable: newCuttable(), stalled: make(chan time.Time, 1), resume: make(chan struct{})}
}

func (s *stallOnWrite) RoundTrip(r *http.Request) (*http.Response, error) {
	kv := r.URL.Path == "/v1/txn" || strings.HasPrefix(r.URL.Path, "/v1/kv/")
	if kv && s.armed.Load() && r.Method == http.MethodPut && s.hanging.CompareAndSwap(false, true) {
		s.stalled <- time.Now()
	}
	if kv && s.hanging.Load() {
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-s.resume:
		}
	}
	return s.cuttable.RoundTrip(r)
}

func (s *stallOnWrite) release() {
	s.hanging.Store(false)
	s.resumeMu.Do(func() { close(s.resume) })
}

// checkStaleWithinFence waits for the stall and the ViewStale event after
// it, and checks that it came within FencePeriod. The slack is half of
// RequestTimeout, for a loaded machine; a write that waits out its
// RequestTimeout before the next query (which then waits FencePeriod) is
// RequestTimeout late.
func checkStaleWithinFence(t *testing.T, tr *stallOnWrite, a cluster.Membership, cfg Config) {
	t.Helper()
	var stalled time.Time
	select {
	case stalled = <-tr.stalled:
	case <-time.After(waitLimit):
		t.Fatalf("no write in %v", waitLimit)
	}
	stale := waitEvent(t, a, cluster.MembershipEventViewStale)
	tr.release()
	assert.Less(t, stale.At.Sub(stalled), cfg.FencePeriod+cfg.RequestTimeout/2,
		"view stale reported %v after the agent stopped answering", stale.At.Sub(stalled))
	require.ErrorIs(t, stale.Err, ErrUnreachable)
	waitEvent(t, a, cluster.MembershipEventViewRestored)
}

// An agent that stops answering while the watcher deletes expired released
// markers is reported stale within FencePeriod. Before, each delete waited
// out its RequestTimeout, then the next query its FencePeriod: with three
// markers the report came 3·RequestTimeout + FencePeriod (4.5 s) after the
// stall, against the documented FencePeriod (1.5 s).
func TestConsulStallDuringMarkerDeletesReportedWithinFence(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	tr := newStallOnWrite()
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	t.Cleanup(tr.release)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	tr.armed.Store(true)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	var ops api.TxnOps
	for i := uint64(1); i <= 3; i++ {
		value, err := encodeRecord(testMember("x", i), time.Now().Add(-time.Hour))
		require.NoError(t, err)
		ops = append(ops, &api.TxnOp{KV: &api.KVTxnOp{Verb: api.KVSet, Key: ks.releasedKey(testMember("x", i)), Value: value}})
	}
	ok, _, _, err := apiClient(t, agent).Txn().Txn(ops, nil)
	require.NoError(t, err)
	require.True(t, ok)
	checkStaleWithinFence(t, tr, a, cfg)
}

// The same when the agent stops answering while the watcher raises the
// epoch base after a regression: before, the raise waited out its
// RequestTimeout and then the next query its FencePeriod.
func TestConsulStallDuringBaseRaiseReportedWithinFence(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	tr := newStallOnWrite()
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	t.Cleanup(tr.release)
	client := apiClient(t, agent)
	ks := newKeyspace(cfg.KeyPrefix, cfg.Cluster)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	idx := putEpochBase(t, client, ks, "1000")
	waitView(t, a, "the base seen", func(top cluster.Topology) bool { return top.Epoch >= idx+1000 })

	tr.armed.Store(true)
	putEpochBase(t, client, ks, "0") // the epoch goes back by about 1000
	checkStaleWithinFence(t, tr, a, cfg)
}
