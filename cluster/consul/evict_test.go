package consul

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// Evict removes another member against the real agent: the others see it
// gone and its own lease is revoked (the runtime fences it).
func TestEvictRevokesTheMember(t *testing.T) {
	agent := testconsul.Start(t)
	p := newProvider(t, testConfig(t, agent))
	a := joinMember(t, p, testMember("a", 1))
	b := joinMember(t, p, testMember("b", 1))
	waitView(t, a, "both members", hasMembers(a.Self().Key(), b.Self().Key()))

	require.NoError(t, p.Evict(context.Background(), b.Self()))
	waitView(t, a, "b gone", hasMembers(a.Self().Key()))
	waitEvent(t, b, cluster.MembershipEventLeaseRevoked)
	require.NoError(t, p.Evict(context.Background(), b.Self()), "evicting a member that is gone is no error")
}

// Evict against an agent that does not answer returns within
// RequestTimeout, also under a context without deadline, with an error
// wrapping ErrUnreachable, as Join and Leave do. Before, it waited as long
// as ctx (for ever here), and its errors wrapped neither sentinel.
func TestEvictUnansweredIsBoundedAndUnreachable(t *testing.T) {
	agent := testconsul.Start(t)
	p := newProvider(t, testConfig(t, agent))
	agent.Pause()
	t.Cleanup(agent.Resume)
	done := make(chan error, 1)
	go func() { done <- p.Evict(context.Background(), testMember("b", 1)) }()
	select {
	case err := <-done:
		require.ErrorIs(t, err, ErrUnreachable)
	case <-time.After(waitLimit):
		agent.Resume()
		<-done
		t.Fatalf("Evict still waiting after %v", waitLimit)
	}
}
