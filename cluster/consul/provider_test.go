package consul

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
	"github.com/fraktor-go/fraktor/internal/testnet"
)

// Three members join and each sees all three, every snapshot with a larger
// epoch than the one before; the service registrations are there for
// discovery.
func TestConsulThreeMembersSeeEachOther(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	all := []string{"a#1", "b#1", "c#1"}
	var ms []cluster.Membership
	for _, id := range []string{"a", "b", "c"} {
		m := joinMember(t, p, testMember(id, 1))
		assert.True(t, m.Lease().Valid(time.Now()))
		assert.Equal(t, cluster.MembershipLeaseHeld, m.Lease().Status)
		ms = append(ms, m)
	}
	var views []cluster.Topology
	for _, m := range ms {
		var last uint64
		top := waitView(t, m, "three members", func(top cluster.Topology) bool {
			assert.Greater(t, top.Epoch, last, "epochs only grow")
			last = top.Epoch
			return hasMembers(all...)(top)
		})
		views = append(views, top)
		assert.Equal(t, cluster.ViewLive, m.ViewState().Status)
	}
	for _, v := range views[1:] {
		assert.Equal(t, views[0].Hash, v.Hash)
	}
	assert.Equal(t, testMember("b", 1), views[0].Members[1], "address, kinds and weight travel with the member")

	client := apiClient(t, agent)
	services, err := client.Agent().ServicesWithFilter("Service == " + `"` + cfg.serviceName() + `"`)
	require.NoError(t, err)
	assert.Len(t, services, 3)
	for _, s := range services {
		assert.Equal(t, []string{"user"}, s.Tags)
		assert.Equal(t, "127.0.0.1", s.Address)
	}

	for _, m := range ms {
		require.NoError(t, m.Leave(context.Background()))
	}
	services, err = client.Agent().ServicesWithFilter("Service == " + `"` + cfg.serviceName() + `"`)
	require.NoError(t, err)
	assert.Empty(t, services, "Leave deregisters the service")
}

// A graceful leave removes the member at once (well before any TTL) and
// leaves its released marker.
func TestConsulGracefulLeave(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	before := waitView(t, a, "a and b", hasMembers("a#1", "b#1"))

	start := time.Now()
	require.NoError(t, b.Leave(context.Background()))
	lease := b.Lease()
	assert.Equal(t, cluster.MembershipLeaseReleased, lease.Status)
	assert.False(t, lease.Valid(time.Now()))
	assert.False(t, lease.Deadline.After(time.Now()))

	after := waitView(t, a, "b gone", hasMembers("a#1"))
	assert.Less(t, time.Since(start), cfg.SessionTTL, "a leave must not wait for the session TTL")
	assert.Greater(t, after.Epoch, before.Epoch)
	_, left := cluster.Diff(before, after)
	require.Len(t, left, 1)
	assert.Equal(t, "b#1", left[0].Key())
	ev := waitEvent(t, a, cluster.MembershipEventMemberReleased)
	assert.Equal(t, "b#1", ev.Member.Key())
	assert.Equal(t, []cluster.Member{testMember("b", 1)}, a.Released())

	client := apiClient(t, agent)
	kv, _, err := client.KV().Get(newKeyspace(cfg.KeyPrefix, cfg.Cluster).releasedKey(testMember("b", 1)), nil)
	require.NoError(t, err)
	require.NotNil(t, kv, "released marker")
	_, releasedAt, err := decodeRecord("b/1", kv.Value)
	require.NoError(t, err)
	assert.WithinDuration(t, time.Now(), releasedAt, time.Minute)

	// b's stream ended; an old incarnation is never resumed.
	for range b.Snapshots() {
	}
	var last cluster.MembershipEvent
	for ev := range b.Events() {
		last = ev
	}
	assert.Equal(t, cluster.MembershipEventEnded, last.Kind)
	require.ErrorIs(t, b.Leave(context.Background()), cluster.ErrMembershipEnded)
	_, err = p.Join(context.Background(), testMember("b", 1))
	require.ErrorIs(t, err, cluster.ErrIncarnationReused)
	_, err = p.Join(context.Background(), testMember("a", 1))
	require.ErrorIs(t, err, cluster.ErrIncarnationReused, "a live incarnation cannot join twice")
	b2 := joinMember(t, p, testMember("b", 2))
	waitView(t, b2, "b restarted", hasMembers("a#1", "b#2"))
}

// A member that stops without leaving (a crash) disappears once its session
// TTL runs out on the servers, never before its own lease deadline.
func TestConsulKilledMemberDisappearsAfterTTL(t *testing.T) {
	agent := testconsul.Start(t)
	p := newProvider(t, testConfig(t, agent))
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, a, "a and b", hasMembers("a#1", "b#1"))

	require.NoError(t, b.Stop(context.Background()))
	stopped := time.Now()
	deadline := b.Lease().Deadline
	assert.Equal(t, cluster.MembershipLeaseLost, b.Lease().Status)

	waitView(t, a, "b expired", hasMembers("a#1"))
	gone := time.Now()
	assert.True(t, gone.After(deadline), "b vanished at %v, before its deadline %v", gone.Sub(stopped), deadline.Sub(stopped))
	assert.GreaterOrEqual(t, gone.Sub(stopped), testFence)
	assert.Less(t, gone.Sub(stopped), 2*testTTL+2*time.Second, "Consul invalidates within 2×TTL")
	assert.Empty(t, a.Released(), "no released marker without a leave")
	require.NoError(t, b.Stop(context.Background()), "Stop is idempotent")
}

// With its renewals cut (the transport hook), a member reports lease lost
// before its deadline, never reports a deadline beyond it, and the others
// see it gone only after that deadline; then it finds itself absent and its
// lease is revoked.
func TestConsulBlockedRenewalsReportLeaseLostBeforeDeadline(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	cut := newCuttable()
	cutCfg := cfg
	cutCfg.API.HttpClient = &http.Client{Transport: cut}
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, newProvider(t, cutCfg), testMember("b", 1))
	waitView(t, a, "a and b", hasMembers("a#1", "b#1"))
	waitView(t, b, "a and b", hasMembers("a#1", "b#1"))

	cut.cut.Store(true)
	// A renewal already in flight may still succeed: the bound is the
	// deadline reported with the lease-lost event.
	lost := waitEvent(t, b, cluster.MembershipEventLeaseLost)
	require.ErrorIs(t, lost.Err, cluster.ErrRenewalFailed)
	deadline := lost.Lease.Deadline
	assert.True(t, lost.At.Before(deadline), "lease lost reported %v after the deadline", lost.At.Sub(deadline))
	assert.Equal(t, cluster.MembershipLeaseLost, b.Lease().Status)

	waitView(t, a, "b expired", hasMembers("a#1"))
	goneAt := time.Now()
	assert.True(t, goneAt.After(deadline), "a saw b gone %v before b's deadline", deadline.Sub(goneAt))
	revoked := waitEvent(t, b, cluster.MembershipEventLeaseRevoked)
	require.ErrorIs(t, revoked.Err, cluster.ErrLeaseRevoked)
	assert.False(t, b.Lease().Deadline.After(deadline), "deadline moved beyond the last successful renewal's")
	assert.False(t, b.Lease().Valid(time.Now()))
	require.NoError(t, b.Leave(context.Background()), "leaving a revoked membership only cleans up")
	cut.CloseIdleConnections()
}

// The agent stopped and restarted mid-run: members keep the last snapshot,
// report the outage (view stale, lease lost), and converge again (B2.4).
func TestConsulAgentRestart(t *testing.T) {
	agent := testconsul.Start(t)
	p := newProvider(t, testConfig(t, agent))
	all := []string{"a#1", "b#1", "c#1"}
	var ms []cluster.Membership
	for _, id := range []string{"a", "b", "c"} {
		ms = append(ms, joinMember(t, p, testMember(id, 1)))
	}
	var before cluster.Topology
	for _, m := range ms {
		before = waitView(t, m, "three members", hasMembers(all...))
	}

	agent.Stop()
	frozen := map[string]time.Time{}
	for _, m := range ms {
		evs := waitEvents(t, m, cluster.MembershipEventViewStale, cluster.MembershipEventLeaseLost)
		ev, lost := evs[cluster.MembershipEventViewStale], evs[cluster.MembershipEventLeaseLost]
		// A stopping agent may still answer "no cluster leader" before it
		// stops answering at all.
		assert.True(t, errors.Is(ev.Err, ErrUnreachable) || errors.Is(ev.Err, ErrRequestFailed), "%v", ev.Err)
		assert.True(t, lost.At.Before(lost.Lease.Deadline))
		frozen[m.Self().Key()] = lost.Lease.Deadline
		last, ok := m.Latest()
		require.True(t, ok)
		assert.Equal(t, before.Hash, last.Hash, "the last snapshot is kept")
		assert.Equal(t, cluster.ViewStale, m.ViewState().Status)
	}

	agent.Restart()
	for _, m := range ms {
		waitEvents(t, m, cluster.MembershipEventViewRestored, cluster.MembershipEventLeaseRestored)
		assert.Equal(t, cluster.ViewLive, m.ViewState().Status)
		assert.True(t, m.Lease().Valid(time.Now()))
		assert.True(t, m.Lease().Deadline.After(frozen[m.Self().Key()]), "renewals extend the deadline again")
	}
	d := joinMember(t, p, testMember("d", 1))
	for _, m := range append(ms, d) {
		top := waitView(t, m, "four members", hasMembers("a#1", "b#1", "c#1", "d#1"))
		assert.Greater(t, top.Epoch, before.Epoch)
	}
}

// Bad configuration gives a clear error: at New for static mistakes, at
// Join for an agent that is not there.
func TestConsulBadConfig(t *testing.T) {
	closedAddr := testnet.ClosedAddress(t)

	t.Run("unreachable address", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.API = api.Config{Address: closedAddr, Token: "never-shown-token"}
		cfg.SessionTTL, cfg.FencePeriod, cfg.RenewInterval, cfg.RequestTimeout = testTTL, testFence, testRenew, testTimeout
		p := newProvider(t, cfg)
		start := time.Now()
		_, err := p.Join(context.Background(), testMember("a", 1))
		require.ErrorIs(t, err, ErrUnreachable)
		assert.Contains(t, err.Error(), closedAddr)
		assert.Contains(t, err.Error(), "create session")
		assert.NotContains(t, err.Error(), "never-shown-token")
		assert.Less(t, time.Since(start), 2*testTimeout, "bounded by RequestTimeout")
	})
	t.Run("empty cluster name", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.Cluster = ""
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "Cluster is empty")
	})
	t.Run("fence not below session TTL", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.FencePeriod = cfg.SessionTTL + time.Second
		_, err := New(cfg)
		require.ErrorIs(t, err, cluster.ErrInvalidProviderConfig)
		assert.Contains(t, err.Error(), "shorter than SessionTTL")
	})
	t.Run("renewal cannot finish before the fence", func(t *testing.T) {
		cfg := DefaultConfig()
		cfg.RequestTimeout = cfg.FencePeriod
		_, err := New(cfg)
		require.ErrorIs(t, err, ErrInvalidConfig)
		assert.Contains(t, err.Error(), "shorter than FencePeriod")
	})
	t.Run("bad member", func(t *testing.T) {
		p := newProvider(t, DefaultConfig())
		_, err := p.Join(context.Background(), cluster.Member{Incarnation: 1})
		require.ErrorIs(t, err, cluster.ErrInvalidMember)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err = p.Join(ctx, testMember("a", 1))
		require.ErrorIs(t, err, context.Canceled)
	})
}
