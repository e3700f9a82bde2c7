package testkit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestRejoinedMemberActivatesWhatDepartedMembersOwned: a member whose
// handover barrier waits for a member that cannot acknowledge (killed) is
// cut off the registry, fences and, while it cannot rejoin, the registry
// drops the killed member and the member's own old incarnation; it then
// joins again as a new incarnation. Every identity must answer again from
// every member. Before, the rejoined member kept the barrier of its old
// incarnation's views, which waited for the killed member and for its own
// old incarnation, both gone before its first view, so neither was ever
// waited out: the identities they had owned were refused as busy ("waiting
// for member …", naming them) for as long as the new incarnation ran. The
// chaos test's registry outages found it (every member fencing at once);
// TestPlacementCoreRejoinForgetsTheOldBarrier in cluster/ is the rule on
// its own.
func TestRejoinedMemberActivatesWhatDepartedMembersOwned(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.Registry(chaosRegistry),
		testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	ctx := ctxFor(t, 60*time.Second)
	ids := make([]cluster.Identity, 60)
	for k := range ids {
		ids[k] = cluster.NewIdentity("counter", fmt.Sprint(k))
		_, err := testkit.Request[*total](ctx, tc.Node(k%3), ids[k], &addReq{N: 1})
		require.NoError(t, err)
	}
	registered := func(key string) bool {
		return slices.ContainsFunc(tc.Registry().Topology().Members, func(m cluster.Member) bool { return m.Key() == key })
	}
	const b = 1
	old, killed := tc.Node(b).Self().Key(), tc.Node(2).Self().Key()
	// Member 2 dies; before the registry drops it, member 3 joins: b's
	// barrier for that view waits for 2's acknowledgement, which never
	// comes.
	tc.Kill(2)
	d := tc.AddNode()
	testkit.Eventually(t, func() bool {
		ms := tc.Node(b).Members()
		return slices.ContainsFunc(ms, func(m cluster.Member) bool { return m.Key() == killed }) &&
			slices.ContainsFunc(ms, func(m cluster.Member) bool { return m.Key() == tc.Node(d).Self().Key() })
	}, 10*time.Second, "member %d never saw member %d join beside the killed one", b, d)
	tc.PartitionRegistry(b)
	testkit.Eventually(t, func() bool { return !registered(killed) && !registered(old) }, 10*time.Second,
		"the registry did not drop the killed member and the cut-off one")
	tc.HealRegistry(b)
	testkit.Eventually(t, func() bool { return tc.Node(b).Self().Key() != old }, 10*time.Second,
		"member %d did not join again", b)
	require.NoError(t, tc.AwaitConverged(ctx))
	for _, i := range tc.Up() {
		for _, id := range ids {
			attempt, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, err := testkit.Request[*total](attempt, tc.Node(i), id, &getReq{})
			cancel()
			require.NoError(t, err, "%s from member %d after member %d rejoined", id, i, b)
		}
	}
	tc.Observer().AssertNoOverlap(t)
}
