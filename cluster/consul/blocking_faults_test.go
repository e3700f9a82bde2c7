package consul

import (
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// failBlocking is an HTTP transport that refuses the view's blocking
// queries (a KV read with an index) while failing is set, as a proxy with a
// timeout shorter than the query's wait would; plain reads pass. Each
// refusal is reported on refused.
type failBlocking struct {
	*cuttable
	failing atomic.Bool
	refused chan time.Time
}

func (f *failBlocking) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.failing.Load() && strings.HasPrefix(r.URL.Path, "/v1/kv/") && r.URL.Query().Get("index") != "" {
		select {
		case f.refused <- time.Now():
		default:
		}
		return nil, fmt.Errorf("test hook: blocking query cut")
	}
	return f.cuttable.RoundTrip(r)
}

// When only blocking queries fail, the plain query after each failure
// succeeds, but it is no proof that the next blocking one will: the backoff
// keeps growing to BackoffMax. Before, each plain success reset it, so the
// view went stale and back every BackoffBase (about ten times a second at
// the default), with a warning each time.
func TestConsulBlockingQueriesFailingBackOff(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	tr := &failBlocking{cuttable: newCuttable(), refused: make(chan time.Time, 64)}
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	tr.failing.Store(true)
	var at []time.Time
	for len(at) < 7 {
		select {
		case when := <-tr.refused:
			at = append(at, when)
		case <-time.After(waitLimit):
			t.Fatalf("only %d blocking queries in %v", len(at), waitLimit)
		}
	}
	tr.failing.Store(false)
	// The wait before the n-th retry is at least half of BackoffBase·2^(n-1),
	// capped at BackoffMax; by the sixth failure that is BackoffMax/2. A
	// loaded machine only lengthens the gaps.
	last := at[6].Sub(at[5])
	require.GreaterOrEqual(t, last, cfg.BackoffMax/2, "blocking queries retried every %v after six failures", last)
	waitView(t, a, "a after the blocking queries pass", hasMembers("a#1"))
}

// viewOutage is an HTTP transport that refuses every view query (a KV read)
// while down, as an unreachable agent would, and the next blocking one once
// failOnce is set. Every view query is reported on queries.
type viewOutage struct {
	*cuttable
	down     atomic.Bool
	failOnce atomic.Bool
	queries  chan viewQuery
}

type viewQuery struct {
	at       time.Time
	blocking bool
	refused  bool
}

func (v *viewOutage) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method != http.MethodGet || !strings.HasPrefix(r.URL.Path, "/v1/kv/") {
		return v.cuttable.RoundTrip(r)
	}
	q := viewQuery{at: time.Now(), blocking: r.URL.Query().Get("index") != ""}
	q.refused = v.down.Load() || (q.blocking && v.failOnce.CompareAndSwap(true, false))
	select {
	case v.queries <- q:
	default:
	}
	if q.refused {
		return nil, fmt.Errorf("test hook: view query refused")
	}
	return v.cuttable.RoundTrip(r)
}

func (v *viewOutage) next(t *testing.T) viewQuery {
	t.Helper()
	select {
	case q := <-v.queries:
		return q
	case <-time.After(waitLimit):
		t.Fatalf("no view query in %v", waitLimit)
		return viewQuery{}
	}
}

// After a long outage the backoff stands near BackoffMax. The plain query
// that passes when the agent is back forgives the outage's failures, so a
// single transient failure of the next blocking query is retried after
// about BackoffBase. Before, the count stayed until a blocking query
// passed: that one failure waited BackoffMax/2 or more (here at least 1 s;
// with the defaults 2.5 s), with the view stale meanwhile.
func TestConsulTransientFailureAfterOutageRetriesSoon(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.BackoffMax = 2 * time.Second
	tr := &viewOutage{cuttable: newCuttable(), queries: make(chan viewQuery, 256)}
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	// Eight failures: the ninth would wait BackoffBase·2^8 capped at
	// BackoffMax, at least BackoffMax/2.
	tr.down.Store(true)
	for refused := 0; refused < 8; {
		if tr.next(t).refused {
			refused++
		}
	}
	tr.failOnce.Store(true)
	tr.down.Store(false)
	var cut viewQuery
	for passed := false; ; {
		q := tr.next(t)
		if q.refused {
			require.True(t, passed, "the blocking query was refused before a plain one passed")
			require.True(t, q.blocking)
			cut = q
			break
		}
		passed = true
	}
	retry := tr.next(t)
	// After the fix the wait is BackoffBase..2·BackoffBase (20..40 ms); the
	// bound leaves the rest of BackoffMax/2 to a loaded machine.
	gap := retry.at.Sub(cut.at)
	require.Less(t, gap, cfg.BackoffMax/2, "a transient failure after the outage waited %v", gap)
	require.False(t, retry.refused)
	waitView(t, a, "a after the outage", hasMembers("a#1"))
	t.Logf("retry %v after the transient failure", gap)
}
