package consul

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// viewGate is an HTTP transport for the view queries (KV reads): while
// down it refuses them, as an unreachable agent would; while holding it
// keeps them until open is called or the request's context ends, and
// reports each one it holds on held. Other requests (Join's session,
// transaction and service calls, renewals) pass.
type viewGate struct {
	*cuttable
	down    atomic.Bool
	holding atomic.Bool
	held    chan struct{}
	opened  chan struct{}
	once    sync.Once
}

func newViewGate() *viewGate {
	return &viewGate{cuttable: newCuttable(), held: make(chan struct{}, 16), opened: make(chan struct{})}
}

func (g *viewGate) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/kv/") {
		switch {
		case g.holding.Load():
			select {
			case g.held <- struct{}{}:
			default:
			}
			select {
			case <-g.opened:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		case g.down.Load():
			return nil, fmt.Errorf("test hook: view query refused")
		}
	}
	return g.cuttable.RoundTrip(r)
}

// open lets the held queries and all later ones through.
func (g *viewGate) open() {
	g.once.Do(func() {
		g.holding.Store(false)
		close(g.opened)
	})
}

// A membership that joins while the Provider's view query is failing
// starts stale, not live: its first view state is ViewStale with the
// watcher's error, and it turns live when a query succeeds again. Before,
// its feed started live and stayed so until the watcher's next failure, a
// backoff or a whole query timeout later, while the cluster runtime trusts
// a live view for placement.
func TestConsulJoinWhileViewStaleStartsStale(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	// A short wait, so that the blocking query in flight ends soon after
	// the gate goes down; a long RequestTimeout (and so query timeout), so
	// that the held query keeps the watcher stale, with no new failure,
	// for seconds while b joins.
	cfg.WaitTime = 100 * time.Millisecond
	cfg.RequestTimeout = 5 * time.Second
	cfg.FencePeriod = 8 * time.Second
	cfg.SessionTTL = 10 * time.Second
	require.NoError(t, cfg.Validate())
	tr := newViewGate()
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	tr.down.Store(true)
	waitEvent(t, a, cluster.MembershipEventViewStale)
	// The next query (after the backoff) is held: the watcher is stale and
	// reports no failure until the gate opens or the query times out.
	tr.holding.Store(true)
	tr.down.Store(false)
	select {
	case <-tr.held:
	case <-time.After(waitLimit):
		t.Fatalf("no view query in %v", waitLimit)
	}
	t.Cleanup(tr.open) // before the memberships' cleanups: they wait for the watcher

	heldSince := time.Now()
	b := joinMember(t, p, testMember("b", 1))
	state := b.ViewState()
	require.Less(t, time.Since(heldSince), cfg.RequestTimeout, "b joined after the held query timed out: the test proves nothing")
	assert.Equal(t, cluster.ViewStale, state.Status, "b joined a stale watcher but reports %v", state.Status)
	assert.ErrorIs(t, state.Err, ErrUnreachable, "the watcher's error")
	require.NotEmpty(t, b.Events())
	assert.Equal(t, cluster.MembershipEventViewStale, (<-b.Events()).Kind, "b's first event")
	_, ok := b.Latest()
	assert.False(t, ok, "no view after b's registration was delivered")

	tr.open()
	waitEvent(t, b, cluster.MembershipEventViewRestored)
	assert.Equal(t, cluster.ViewLive, b.ViewState().Status)
	waitView(t, b, "b after the heal", hasMembers("a#1", "b#1"))
	waitView(t, a, "a after the heal", hasMembers("a#1", "b#1"))
}
