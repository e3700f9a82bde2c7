package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// SlowRegistry's model (its godoc and memberMembership's): the answer to a
// renewal sent at s reaches the member at s + d, so the lease the member
// sees was renewed at least d and less than d + R ago, and within
// R + d + S < F no member fences for it. memberMembership.Lease only
// learns of a renewal when a Lease call sees it as the newest one
// (l.Renewed), so renewals that happen between two Lease calls are never
// recorded: when the clock moves past several renewals before the next
// call (a virtual Advance longer than R, a placement actor whose tick
// waited), the member's lease stays at the last renewal it saw until the
// newest one's answer is due, up to 2R + d old (or more) instead of
// d + R. Here (R 100 ms, F 400 ms, d 150 ms) the clock moves from the join
// to 260 ms: the renewal at 100 ms was answered at 250 ms, but the member
// still sees the join's grant (age 260 ms); after a 10 s Advance it sees
// the join's grant of 10 s ago, an invalid lease, and would fence, though
// R + d + S < F holds for any S < 150 ms.
func TestSlowRegistryAnswersRenewalsNotSeenByALeaseCall(t *testing.T) {
	mr, clk := newFaultRegistry(t)
	lt := mr.reg.LeaseTiming()
	m, err := mr.Join(context.Background(), faultMember("a"))
	require.NoError(t, err)
	defer func() { _ = m.Leave(context.Background()) }()
	start := clk.Now()
	const d = 150 * time.Millisecond
	mr.latency.Store(int64(d))

	clk.Advance(260 * time.Millisecond) // renewals at 100 and 200 ms
	l := m.Lease()
	age := clk.Now().Sub(l.Renewed)
	require.Equal(t, cluster.MembershipLeaseHeld, l.Status)
	assert.Less(t, age, d+lt.RenewInterval,
		"the lease the member sees was renewed %v ago (at +%v): the renewal at +100 ms, answered at +250 ms, was missed", age, l.Renewed.Sub(start))

	clk.Advance(10 * time.Second)
	l = m.Lease()
	require.True(t, l.Valid(clk.Now()), "after a 10 s step the member's lease is invalid (renewed %v ago) while the registry renews it every %v with a latency of %v",
		clk.Now().Sub(l.Renewed), lt.RenewInterval, d)
}
