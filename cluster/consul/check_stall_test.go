package consul

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// stallChecks is an HTTP transport whose service-check updates hang until
// the request's context ends (a local agent whose check endpoint does not
// answer) while hanging is set; renewals pass and are reported on renews.
type stallChecks struct {
	*cuttable
	hanging atomic.Bool
	stalled chan struct{} // one token per stalled update (dropped when full)
}

func (s *stallChecks) RoundTrip(r *http.Request) (*http.Response, error) {
	if s.hanging.Load() && strings.HasPrefix(r.URL.Path, "/v1/agent/check/update/") {
		select {
		case s.stalled <- struct{}{}:
		default:
		}
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	return s.cuttable.RoundTrip(r)
}

// The service check is for discovery only: an update that hangs must not
// delay the lease renewals, which keep coming every RenewInterval. Before,
// the update ran on the renewal goroutine, so each renewal waited out the
// update's RequestTimeout first: the renewals came every RequestTimeout
// instead, eating the margin that RenewInterval + RequestTimeout <
// FencePeriod leaves for a slow renewal.
func TestConsulStalledCheckUpdateDoesNotDelayRenewals(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	tr := &stallChecks{cuttable: newCuttable(), stalled: make(chan struct{}, 16)}
	cfg.API.HttpClient = &http.Client{Transport: tr}
	t.Cleanup(tr.base.CloseIdleConnections)
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	tr.hanging.Store(true)
	select {
	case <-tr.stalled:
	case <-time.After(waitLimit):
		t.Fatal("no check update was sent")
	}
	// The renewals sent while an update hangs.
	for range len(tr.renews) {
		<-tr.renews
	}
	var sends []time.Time
	for len(sends) < 6 {
		select {
		case at := <-tr.renews:
			sends = append(sends, at)
		case <-time.After(waitLimit):
			t.Fatalf("only %d renewals in %v", len(sends), waitLimit)
		}
	}
	tr.hanging.Store(false)
	// Scheduling slack on a loaded machine, far below RequestTimeout.
	limit := cfg.RenewInterval + cfg.RequestTimeout/2
	for i := 1; i < len(sends); i++ {
		assert.LessOrEqual(t, sends[i].Sub(sends[i-1]), limit, "renewal %d came %v after the one before", i, sends[i].Sub(sends[i-1]))
	}
	require.Equal(t, "held", a.Lease().Status.String())
}
