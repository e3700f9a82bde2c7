package consul

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/testconsul"
)

// A frozen agent (SIGSTOP) is reported by the view stream within the fence
// period, even with a blocking wait longer than it.
func TestConsulStalledAgentViewStaleWithinFence(t *testing.T) {
	agent := testconsul.Start(t)
	cfg := testConfig(t, agent)
	cfg.WaitTime = 5 * time.Second // longer than FencePeriod
	a := joinMember(t, newProvider(t, cfg), testMember("a", 1))
	waitView(t, a, "a", hasMembers("a#1"))

	agent.Pause()
	paused := time.Now()
	stale := waitEvent(t, a, cluster.MembershipEventViewStale)
	agent.Resume()
	// The query in flight lasts at most FencePeriod; it may have been sent
	// a moment after the freeze began, and the event is stamped after the
	// error came back: allow scheduling slack, far below WaitTime.
	assert.LessOrEqual(t, stale.At.Sub(paused), cfg.FencePeriod+200*time.Millisecond, "view stale reported %v after the stall", stale.At.Sub(paused))
	require.ErrorIs(t, stale.Err, ErrUnreachable)
	waitEvent(t, a, cluster.MembershipEventViewRestored)
}
