package consul

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// slowJoin is an HTTP transport whose transactions and service
// registrations are answered after delay (a slow agent: each answer well
// within RequestTimeout); renewals pass and are reported on renews.
type slowJoin struct {
	*cuttable
	delay time.Duration
}

func (s *slowJoin) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Path == "/v1/txn" || strings.HasPrefix(r.URL.Path, "/v1/agent/service/register") {
		t := time.NewTimer(s.delay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return nil, r.Context().Err()
		}
	}
	return s.cuttable.RoundTrip(r)
}

// The lease deadline counts from the session's creation, the first thing
// Join sends, so the first renewal must come RenewInterval after that send,
// not RenewInterval after Join returns. Here Join takes three slow answers
// (two transactions and the service registration), 2.1 s: less than the
// 2.5 s RenewInterval (Join renews itself only after that), but with it
// more than the 4 s fence period. The first renewal was sent at least
// 4.6 s after the creation, after the deadline, with the lease still
// "held" and no LeaseLost before.
func TestConsulSlowJoinRenewsBeforeDeadline(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.SessionTTL = 5 * time.Second
	cfg.FencePeriod = 4 * time.Second
	cfg.RenewInterval = 2500 * time.Millisecond
	cfg.RequestTimeout = time.Second
	require.NoError(t, cfg.Validate())
	tr := &slowJoin{cuttable: newCuttable(), delay: 700 * time.Millisecond}
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	a, err := newProvider(t, cfg).Join(ctx, testMember("a", 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	lease := a.Lease()
	require.True(t, lease.Valid(time.Now()), "Join returned an expired lease: %+v", lease)

	select {
	case sent := <-tr.renews:
		require.True(t, sent.Before(lease.Deadline), "first renewal sent %v after the lease deadline (%v after the session's creation)",
			sent.Sub(lease.Deadline), sent.Sub(lease.Renewed))
	case <-time.After(waitLimit):
		t.Fatalf("no renewal in %v", waitLimit)
	}
}

// Join returns a valid lease (docs/membership.md: "Lease() is valid when it
// returns") however slowly the agent answers within RequestTimeout. Here
// the requests after the session's creation take 4.2 s of a 4 s fence
// period: before, Join returned a lease already past its deadline.
func TestConsulSlowJoinReturnsValidLease(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.SessionTTL = 5 * time.Second
	cfg.FencePeriod = 4 * time.Second
	cfg.RenewInterval = 1500 * time.Millisecond
	cfg.RequestTimeout = 2 * time.Second
	require.NoError(t, cfg.Validate())
	tr := &slowJoin{cuttable: newCuttable(), delay: 1400 * time.Millisecond}
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)

	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	a, err := newProvider(t, cfg).Join(ctx, testMember("a", 1))
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Stop(context.Background()) })
	lease := a.Lease()
	require.True(t, lease.Valid(time.Now()), "Join returned a lease %v past its deadline", time.Since(lease.Deadline))
}
