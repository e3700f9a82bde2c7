package consul

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// Test timings: well inside the relations Validate enforces, short enough
// for a suite under a minute. The test agent allows 1s session TTLs.
const (
	testTTL     = 2 * time.Second
	testFence   = 1500 * time.Millisecond
	testRenew   = 200 * time.Millisecond
	testTimeout = time.Second // generous: the test machine may be loaded
	waitLimit   = 15 * time.Second
)

var nonName = regexp.MustCompile(`[^A-Za-z0-9._-]`)

func testConfig(t *testing.T, agent *testconsul.Agent) Config {
	t.Helper()
	cfg := DefaultConfig()
	cfg.API = agent.APIConfig()
	cfg.Cluster = nonName.ReplaceAllString(t.Name(), "-")
	cfg.SessionTTL = testTTL
	cfg.FencePeriod = testFence
	cfg.RenewInterval = testRenew
	cfg.RequestTimeout = testTimeout
	cfg.WaitTime = 5 * time.Second
	cfg.BackoffBase = 20 * time.Millisecond
	cfg.BackoffMax = 300 * time.Millisecond
	require.NoError(t, cfg.Validate())
	return cfg
}

func newProvider(t *testing.T, cfg Config) *Provider {
	t.Helper()
	p, err := New(cfg)
	require.NoError(t, err)
	return p
}

func testMember(id string, inc uint64) cluster.Member {
	return cluster.Member{ID: id, Incarnation: inc, Address: "127.0.0.1:" + fmt.Sprint(4000+inc), Kinds: []string{"user"}, Weight: 1}
}

// joinMember joins and makes sure the membership ends at test cleanup.
func joinMember(t *testing.T, p *Provider, m cluster.Member) cluster.Membership {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ms, err := p.Join(ctx, m)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ms.Stop(context.Background()) })
	return ms
}

// waitView receives snapshots until one satisfies pred and returns it. pred
// sees each view once: Latest is the newest view delivered, which may still
// wait in the Snapshots channel, so that copy is skipped (a pred asserting
// that epochs grow failed on it when the machine was loaded enough for the
// view to be still queued).
func waitView(t *testing.T, ms cluster.Membership, what string, pred func(cluster.Topology) bool) cluster.Topology {
	t.Helper()
	seen, seenOK := ms.Latest()
	if seenOK && pred(seen) {
		return seen
	}
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case top, ok := <-ms.Snapshots():
			require.True(t, ok, "%s: stream of %s ended", what, ms.Self().Key())
			if seenOK && top.Epoch == seen.Epoch && top.Hash == seen.Hash {
				seenOK = false // the copy of the view pred saw through Latest
				continue
			}
			if pred(top) {
				return top
			}
		case <-timeout.C:
			last, _ := ms.Latest()
			require.FailNowf(t, "no view", "%s: %s waited %v; last view epoch %d members %v",
				what, ms.Self().Key(), waitLimit, last.Epoch, memberKeys(last))
		}
	}
}

// waitEvent receives events until one of kind arrives and returns it.
func waitEvent(t *testing.T, ms cluster.Membership, kind cluster.MembershipEventKind) cluster.MembershipEvent {
	t.Helper()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for {
		select {
		case ev, ok := <-ms.Events():
			require.True(t, ok, "events of %s closed while waiting for %s", ms.Self().Key(), kind)
			if ev.Kind == kind {
				return ev
			}
		case <-timeout.C:
			require.FailNowf(t, "no event", "%s waited %v for %s", ms.Self().Key(), waitLimit, kind)
		}
	}
}

// waitEvents receives events until each of kinds arrived (in any order) and
// returns the first of each.
func waitEvents(t *testing.T, ms cluster.Membership, kinds ...cluster.MembershipEventKind) map[cluster.MembershipEventKind]cluster.MembershipEvent {
	t.Helper()
	got := map[cluster.MembershipEventKind]cluster.MembershipEvent{}
	want := map[cluster.MembershipEventKind]bool{}
	for _, k := range kinds {
		want[k] = true
	}
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	var all []string
	for len(got) < len(want) {
		select {
		case ev, ok := <-ms.Events():
			require.True(t, ok, "events of %s closed while waiting for %v", ms.Self().Key(), kinds)
			all = append(all, ev.String())
			if _, dup := got[ev.Kind]; want[ev.Kind] && !dup {
				got[ev.Kind] = ev
			}
		case <-timeout.C:
			require.FailNowf(t, "no event", "%s waited %v for %v, got %q; lease %+v", ms.Self().Key(), waitLimit, kinds, all, ms.Lease())
		}
	}
	return got
}

func memberKeys(top cluster.Topology) []string {
	out := make([]string, len(top.Members))
	for i, m := range top.Members {
		out[i] = m.Key()
	}
	return out
}

func hasMembers(keys ...string) func(cluster.Topology) bool {
	return func(top cluster.Topology) bool {
		got := memberKeys(top)
		if len(got) != len(keys) {
			return false
		}
		for i := range keys {
			if got[i] != keys[i] {
				return false
			}
		}
		return true
	}
}

func apiClient(t *testing.T, agent *testconsul.Agent) *api.Client {
	t.Helper()
	cfg := agent.APIConfig()
	c, err := api.NewClient(&cfg)
	require.NoError(t, err)
	t.Cleanup(cfg.HttpClient.CloseIdleConnections)
	return c
}

// cuttable is an HTTP transport that fails session renewals while cut (the
// test hook for "renewals blocked", set as Config.API.HttpClient), answers
// them 429 while limited, and
// reports the send time of every renewal it lets through on renews (dropped
// when the buffer is full).
type cuttable struct {
	base    *http.Transport
	cut     atomic.Bool
	limited atomic.Bool // answer renewals 429 Too Many Requests
	renews  chan time.Time
}

func newCuttable() *cuttable {
	return &cuttable{base: api.DefaultConfig().Transport.Clone(), renews: make(chan time.Time, 256)}
}

func (c *cuttable) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasPrefix(r.URL.Path, "/v1/session/renew/") {
		if c.cut.Load() {
			return nil, fmt.Errorf("test hook: renewal cut")
		}
		if c.limited.Load() {
			return &http.Response{
				StatusCode: http.StatusTooManyRequests, Status: "429 Too Many Requests", Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
				Header: http.Header{}, Body: io.NopCloser(strings.NewReader("Your IP is issuing too many concurrent connections")), Request: r,
			}, nil
		}
		select {
		case c.renews <- time.Now():
		default:
		}
	}
	return c.base.RoundTrip(r)
}

func (c *cuttable) CloseIdleConnections() { c.base.CloseIdleConnections() }
