package testkit_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// A member of a TestCluster whose renewals cannot reach the registry for
// DefaultLeaseSlack less two renewal intervals (a renewal timer starved
// that long, as on a loaded CI machine, leaves the same gap) keeps its
// lease past its stop budget and does not fence: once the registry is
// back it renews, with the same incarnation. With the earlier timing (a
// fence period of 400 ms, 200 ms of slack) its lease ran out 400 ms into
// the cut and it fenced, stopped its grains and rejoined.
func TestClusterMemberSurvivesLateRenewalsWithinSlack(t *testing.T) {
	// The system clock's timing, on the virtual clock, so that the cut's
	// length is exact.
	tc := testkit.NewCluster(t, testkit.Nodes(2), testkit.VirtualTime(), testkit.Registry(testkit.FastRegistry()))
	var fenced atomic.Int64
	es := tc.System(1).EventStream()
	sub := actor.Subscribe(es, func(*cluster.Fenced) { fenced.Add(1) })
	defer es.Unsubscribe(sub)
	key := tc.Node(1).Self().Key()
	r := testkit.FastRegistry().RenewInterval
	var timing cluster.Config
	testkit.FastTiming(&timing)
	s := timing.StopBudget
	// The renewal just before the cut was sent up to R before it, and the
	// first after the heal comes up to R after it: the gap is less than
	// the cut plus 2R.
	cut := testkit.DefaultLeaseSlack - 2*r

	tc.PartitionRegistry(1)
	from := tc.Now()
	tc.Eventually(func() bool { return tc.Now().Sub(from) >= cut }, 2*cut, "the cut lasts %v", cut)
	l := tc.Node(1).Lease()
	require.Truef(t, l.Valid(tc.Now().Add(s)), "%v into the cut the lease (%v, deadline %v after the cut began) no longer holds past the stop budget %v: the member fences",
		tc.Now().Sub(from), l.Status, l.Deadline.Sub(from), s)

	tc.HealRegistry(1)
	healed := tc.Now()
	tc.Eventually(func() bool {
		l := tc.Node(1).Lease()
		return l.Status == cluster.MembershipLeaseHeld && !l.Renewed.Before(healed)
	}, time.Second, "member 1 renews after the heal")
	require.Zero(t, fenced.Load(), "Fenced events")
	require.Equal(t, key, tc.Node(1).Self().Key(), "the same incarnation")
	require.Equal(t, cluster.StatusReady, tc.Node(1).Status())
}

// SlackRegistry's timing gives exactly the slack asked for (F − R − S),
// and the cluster accepts it with that stop budget; FastRegistry is it
// for DefaultLeaseSlack and FastTiming.
func TestSlackRegistryTiming(t *testing.T) {
	fast := testkit.FastRegistry()
	assert.Equal(t, cluster.MemoryConfig{LeaseTTL: 1250 * time.Millisecond, RenewInterval: 100 * time.Millisecond,
		FencePeriod: time.Second}, fast)
	for _, tt := range []struct {
		slack, s time.Duration
		rho      float64
	}{
		{testkit.DefaultLeaseSlack, 100 * time.Millisecond, 0.01},
		{200 * time.Millisecond, 100 * time.Millisecond, 0.01},
		{3 * time.Second, 100 * time.Millisecond, 0.01},
		{time.Second, 500 * time.Millisecond, 0.05},
		{time.Millisecond, 0, 0.01},
	} {
		cfg := testkit.SlackRegistry(tt.slack, tt.s, tt.rho)
		require.NoError(t, cfg.Validate(), "%+v", tt)
		assert.Equal(t, tt.slack, cfg.FencePeriod-cfg.RenewInterval-tt.s, "slack of %+v", tt)
		reg, err := cluster.NewMemoryRegistry(cfg)
		require.NoError(t, err)
		c := cluster.Config{Provider: reg, StopBudget: tt.s, MaxPause: 100 * time.Millisecond, ClockDrift: tt.rho}
		if tt.s == 0 {
			c.StopBudget = time.Nanosecond
		}
		assert.NoError(t, c.Validate(), "%+v: %+v", tt, cfg)
		reg.Close()
	}
	for _, bad := range []time.Duration{0, -time.Second} {
		assert.Error(t, testkit.SlackRegistry(bad, 100*time.Millisecond, 0.01).Validate(), "slack %v", bad)
	}
}

// LeaseSlack sets the registry's timing from the members' own stop
// budget (after ConfigureCluster); the last of LeaseSlack and Registry
// counts; a slack that is not positive fails the test.
func TestLeaseSlackOption(t *testing.T) {
	longStop := func(c *cluster.Config) { c.StopBudget = 300 * time.Millisecond }
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime(),
		testkit.ConfigureCluster(longStop), testkit.LeaseSlack(2*time.Second))
	lt := tc.Registry().LeaseTiming()
	assert.Equal(t, 2*time.Second+100*time.Millisecond+300*time.Millisecond, lt.FencePeriod)
	assert.Equal(t, testkit.SlackRegistry(2*time.Second, 300*time.Millisecond, 0.01).LeaseTTL, lt.LeaseTTL)

	custom := cluster.MemoryConfig{LeaseTTL: time.Minute, RenewInterval: time.Second, FencePeriod: 10 * time.Second}
	tc = testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime(), testkit.LeaseSlack(time.Second), testkit.Registry(custom))
	assert.Equal(t, 10*time.Second, tc.Registry().LeaseTiming().FencePeriod)

	rec := newRecorder(t)
	tc = testkit.NewCluster(rec, testkit.Nodes(1), testkit.LeaseSlack(0))
	assert.Nil(t, tc)
	require.Len(t, rec.Fatals(), 1)
	assert.Equal(t, "testkit: NewCluster: LeaseSlack 0s must be positive", rec.lastFatal())
}

// Without Registry or LeaseSlack, a cluster on the system clock has
// FastRegistry's timing and one on virtual time VirtualRegistry's.
func TestClusterDefaultRegistryTiming(t *testing.T) {
	timing := func(c cluster.MemoryConfig) cluster.LeaseTiming {
		return cluster.LeaseTiming{RenewInterval: c.RenewInterval, FencePeriod: c.FencePeriod, LeaseTTL: c.LeaseTTL}
	}
	tc := testkit.NewCluster(t, testkit.Nodes(1))
	assert.Equal(t, timing(testkit.FastRegistry()), tc.Registry().LeaseTiming())
	tc = testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime())
	assert.Equal(t, timing(testkit.VirtualRegistry()), tc.Registry().LeaseTiming())
	tc = testkit.NewCluster(t, testkit.Nodes(1), testkit.LeaseSlack(300*time.Millisecond), testkit.VirtualTime())
	assert.Equal(t, timing(testkit.SlackRegistry(300*time.Millisecond, 100*time.Millisecond, 0.01)), tc.Registry().LeaseTiming())
}
