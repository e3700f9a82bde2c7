package consul

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// retireFaults is an HTTP transport for review10's Retire probe: while
// loseTxn is set, the next transaction reaches the agent (and is applied)
// but its answer is lost, as when the caller's ctx ends after the write
// landed; while failDeregister is set, the next service deregistration
// fails before it is sent.
type retireFaults struct {
	*cuttable
	loseTxn        atomic.Bool
	failDeregister atomic.Bool
}

func (f *retireFaults) RoundTrip(r *http.Request) (*http.Response, error) {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/txn") && f.loseTxn.CompareAndSwap(true, false):
		resp, err := f.cuttable.RoundTrip(r)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
		}
		return nil, errors.New("test hook: the transaction's answer was lost")
	case strings.HasPrefix(r.URL.Path, "/v1/agent/service/deregister/") && f.failDeregister.CompareAndSwap(true, false):
		return nil, errors.New("test hook: deregistration failed")
	}
	return f.cuttable.RoundTrip(r)
}

// Review10 probe (passes; kept because it pins the retry contract of
// Retire step by step): the release transaction lands but its answer is
// lost, then the deregistration fails once. The marker is visible to the
// others from the first call on (marker and key deletion first,
// deregistration last); the second call finds the key gone and writes the
// marker again (idempotent: still one released incarnation), destroys
// the session and fails at the deregistration; the third only
// deregisters. Nothing is left: no session, no service, no member key.
func TestConsulRetireRetriesAfterLostAnswerAndFailedDeregisterReview10(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))

	bcfg := cfg
	tr := &retireFaults{cuttable: newCuttable()}
	bcfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	b := joinMember(t, newProvider(t, bcfg), testMember("b", 1))
	waitView(t, a, "a and b", hasMembers("a#1", "b#1"))
	require.NoError(t, b.Stop(context.Background()))
	r := b.(cluster.Retirer)

	tr.loseTxn.Store(true)
	require.Error(t, r.Retire(context.Background()), "the lost answer fails the call")
	waitView(t, a, "b released by the write that landed", hasMembers("a#1"))
	ev := waitEvent(t, a, cluster.MembershipEventMemberReleased)
	assert.Equal(t, "b#1", ev.Member.Key())

	tr.failDeregister.Store(true)
	err := r.Retire(context.Background())
	require.ErrorContains(t, err, "deregister service")
	require.NoError(t, r.Retire(context.Background()))
	require.NoError(t, r.Retire(context.Background()), "done: nil at once")

	assert.Equal(t, []cluster.Member{testMember("b", 1)}, a.Released())
	client := apiClient(t, agent)
	services, err := client.Agent().ServicesWithFilter(`Service == "` + cfg.serviceName() + `"`)
	require.NoError(t, err)
	assert.Len(t, services, 1, "b's service deregistered")
	sessions, _, err := client.Session().List(nil)
	require.NoError(t, err)
	for _, s := range sessions {
		assert.NotEqual(t, b.(*membership).session, s.ID, "b's session destroyed")
	}
	pair, _, err := client.KV().Get(newKeyspace(cfg.KeyPrefix, cfg.Cluster).member(testMember("b", 1)), nil)
	require.NoError(t, err)
	assert.Nil(t, pair, "b's member key is gone")
}
