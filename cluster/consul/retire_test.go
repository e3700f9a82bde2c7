package consul

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// Retire after Stop (a fenced incarnation): while the agent does not answer
// it fails with ErrUnreachable and may be called again; once the agent
// answers, the member key goes with a released marker, at once (the
// servers re-arm the session's timer at 2×TTL when the agent resumes, so
// without Retire the member stayed up to 2×TTL), the service is
// deregistered, and later calls return nil.
func TestConsulRetireAfterStopReleasesWhenReachable(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, a, "a and b", hasMembers("a#1", "b#1"))
	require.NoError(t, b.Stop(context.Background()))
	r, ok := b.(cluster.Retirer)
	require.True(t, ok, "a Consul membership is a Retirer")

	agent.Pause()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := r.Retire(ctx)
	cancel()
	require.ErrorIs(t, err, ErrUnreachable)
	agent.Resume()
	resumed := time.Now()
	require.NoError(t, r.Retire(context.Background()))

	waitView(t, a, "b gone", hasMembers("a#1"))
	assert.Less(t, time.Since(resumed), cfg.SessionTTL, "the retired member went at once")
	ev := waitEvent(t, a, cluster.MembershipEventMemberReleased)
	assert.Equal(t, "b#1", ev.Member.Key())
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
	require.NoError(t, r.Retire(context.Background()), "a retired membership retires again without error")
}

// Retire of an incarnation the servers dropped already (its session
// expired) writes its released marker all the same: the others stop
// waiting W for it. Retire of a running membership ends it first.
func TestConsulRetireAfterExpiryWritesMarker(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	p := newProvider(t, cfg)
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, a, "a and b", hasMembers("a#1", "b#1"))
	require.NoError(t, b.Stop(context.Background()))
	waitView(t, a, "b expired", hasMembers("a#1"))
	assert.Empty(t, a.Released())

	require.NoError(t, b.(cluster.Retirer).Retire(context.Background()))
	ev := waitEvent(t, a, cluster.MembershipEventMemberReleased)
	assert.Equal(t, "b#1", ev.Member.Key())

	c := joinMember(t, p, testMember("c", 1))
	waitView(t, a, "a and c", hasMembers("a#1", "c#1"))
	require.NoError(t, c.(cluster.Retirer).Retire(context.Background()))
	assert.Equal(t, cluster.ViewEnded, c.ViewState().Status, "Retire ended the running membership")
	assert.Equal(t, cluster.MembershipLeaseReleased, c.Lease().Status)
	waitView(t, a, "c retired", hasMembers("a#1"))
	ev = waitEvent(t, a, cluster.MembershipEventMemberReleased)
	assert.Equal(t, "c#1", ev.Member.Key())
}
