package testkit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestVirtualClusterBlockingFirstCalls: right after NewCluster with
// VirtualTime, blocking requests (nothing moves the clock while they
// wait) are answered on every member, for identities every member owns.
// Before, a joiner got the founder's vouch only with a view
// acknowledgement that arrived before its own first view and was dropped,
// and waited for the next tick, which needs the clock: the requests to
// the grains it owns failed with "activation busy ... joined a cluster that
// existed before it" (9 of 20 runs, newuser6).
func TestVirtualClusterBlockingFirstCalls(t *testing.T) {
	for round := range 5 {
		t.Run(fmt.Sprint(round), func(t *testing.T) {
			tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.VirtualTime(),
				testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
			for i := range 12 {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				id := cluster.NewIdentity("counter", fmt.Sprintf("r%d-%d", round, i))
				_, err := testkit.Request[*whereIs](ctx, tc.Node(i%3), id, &whoReq{})
				cancel()
				require.NoError(t, err, "round %d, request %d", round, i)
			}
		})
	}
}
