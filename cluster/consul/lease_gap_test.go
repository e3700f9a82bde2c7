package consul

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// The agent is frozen for three session TTLs and resumed while a renewal is
// in flight: that renewal is answered OK, but the servers' overdue TTL timer
// usually invalidates the session a moment later. The member must not
// report its lease restored on that answer: it reports the lease revoked,
// or, when the session did survive, restored and then held.
func TestConsulFrozenAgentDoesNotRestoreDeadSession(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.SessionTTL, cfg.FencePeriod, cfg.RenewInterval, cfg.RequestTimeout = time.Second, 800*time.Millisecond, 100*time.Millisecond, 500*time.Millisecond
	require.NoError(t, cfg.Validate())
	hook := newCuttable()
	hookCfg := cfg
	hookCfg.API.HttpClient = &http.Client{Transport: hook}
	t.Cleanup(hook.CloseIdleConnections)
	b := joinMember(t, newProvider(t, hookCfg), testMember("b", 1))
	waitView(t, b, "b", hasMembers("b#1"))
	session := b.(*membership).session

	agent.Pause()
	paused := time.Now()
	waitEvent(t, b, cluster.MembershipEventLeaseLost)
	// Resume right after a renewal went out at least 3×TTL into the freeze,
	// so that it is in flight when the agent runs again.
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	for sent := paused; sent.Sub(paused) < 3*cfg.SessionTTL; {
		select {
		case sent = <-hook.renews:
		case <-timeout.C:
			agent.Resume()
			require.FailNow(t, "no renewal 3×TTL into the freeze")
		}
	}
	agent.Resume()

	// Whether the overdue timer or a queued renewal runs first inside the
	// resumed agent is a race. Either the session is invalidated, and the
	// member must report revoked without ever reporting restored, or it
	// survives, and a restored lease must stay held for two more TTLs.
	var seen []string
	for {
		ev := waitEventAny(t, b)
		seen = append(seen, ev.String())
		if ev.Kind == cluster.MembershipEventLeaseRevoked {
			require.ErrorIs(t, ev.Err, cluster.ErrLeaseRevoked)
			assert.False(t, b.Lease().Valid(time.Now()))
			entry, _, err := apiClient(t, agent).Session().Info(session, &api.QueryOptions{RequireConsistent: true})
			require.NoError(t, err)
			assert.Nil(t, entry, "revoked, yet the servers still hold the session")
			break
		}
		if ev.Kind == cluster.MembershipEventLeaseRestored {
			waitRenewedAfter(t, b, time.Now().Add(2*cfg.SessionTTL))
			for drained := false; !drained; {
				select {
				case ev := <-b.Events():
					seen = append(seen, ev.String())
				default:
					drained = true
				}
			}
			require.Equal(t, cluster.MembershipLeaseHeld, b.Lease().Status, "lease restored on a session the servers invalidated; events %q", seen)
			break
		}
	}
	require.NoError(t, b.Leave(context.Background()))
}

// waitEventAny returns the next event.
func waitEventAny(t *testing.T, ms cluster.Membership) cluster.MembershipEvent {
	t.Helper()
	timeout := time.NewTimer(waitLimit)
	defer timeout.Stop()
	select {
	case ev, ok := <-ms.Events():
		require.True(t, ok, "events of %s closed", ms.Self().Key())
		return ev
	case <-timeout.C:
		require.FailNowf(t, "no event", "%s waited %v; lease %+v", ms.Self().Key(), waitLimit, ms.Lease())
	}
	return cluster.MembershipEvent{}
}

// Renewals refused with 429 (the agent's rate or connection limit) make the
// lease lost with ErrRateLimited, never revoked; once they pass again within
// the TTL the lease is held again.
func TestConsulRateLimitedRenewalIsNotALostSession(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	hook := newCuttable()
	hookCfg := cfg
	hookCfg.API.HttpClient = &http.Client{Transport: hook}
	t.Cleanup(hook.CloseIdleConnections)
	b := joinMember(t, newProvider(t, hookCfg), testMember("b", 1))
	waitView(t, b, "b", hasMembers("b#1"))

	hook.limited.Store(true)
	lost := waitEvent(t, b, cluster.MembershipEventLeaseLost)
	require.ErrorIs(t, lost.Err, ErrRateLimited)
	require.ErrorIs(t, lost.Err, cluster.ErrRenewalFailed)
	hook.limited.Store(false)
	restored := waitEvent(t, b, cluster.MembershipEventLeaseRestored)
	assert.Equal(t, cluster.MembershipLeaseHeld, restored.Lease.Status)
	assert.Equal(t, cluster.MembershipLeaseHeld, b.Lease().Status)
}
