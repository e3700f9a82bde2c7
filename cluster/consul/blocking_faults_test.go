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
