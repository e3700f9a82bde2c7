package testkit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestRegistryCutMemberReleasesItsFencedIncarnation: a member cut off the
// registry fences; once the cut heals it releases its fenced incarnation
// (cluster.Retirer), so the registry drops it long before its lease would
// expire (30 s here) and the others need not wait it out. The testkit's
// per-member view of the registry wraps each membership: before it
// forwarded Retire, the runtime did not see a Retirer, never released the
// old incarnation, and the registry kept it until its lease expired.
func TestRegistryCutMemberReleasesItsFencedIncarnation(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(2),
		testkit.Registry(cluster.MemoryConfig{LeaseTTL: 30 * time.Second,
			RenewInterval: 100 * time.Millisecond, FencePeriod: 400 * time.Millisecond}),
		testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	registered := func(key string) bool {
		return slices.ContainsFunc(tc.Registry().Topology().Members, func(m cluster.Member) bool { return m.Key() == key })
	}
	old := tc.Node(1).Self().Key()
	tc.PartitionRegistry(1)
	testkit.Eventually(t, func() bool { return tc.Node(1).Status() == cluster.StatusFenced }, 10*time.Second,
		"member 1 did not fence while cut off the registry")
	require.True(t, registered(old), "the registry dropped the fenced incarnation before its lease expired")
	tc.HealRegistry(1)
	testkit.Eventually(t, func() bool { return !registered(old) }, 10*time.Second,
		"the registry still holds member 1's fenced incarnation %s: it was not released", old)
	testkit.Eventually(t, func() bool { return tc.Node(1).Status() == cluster.StatusReady }, 10*time.Second,
		"member 1 did not join again")
}
