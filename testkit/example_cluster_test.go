package testkit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// A three-member cluster in one process: a grain keeps answering after the
// member that hosted it is killed, and the observer confirms that no
// identity ever ran on two members at once.
func ExampleNewCluster() {
	t := exampleT()
	defer t.finish() // what the test's cleanup does: every member shuts down

	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.Kinds(plainCounter()),
		testkit.Serializers(counterMessages))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	id := cluster.NewIdentity("counter", "42")

	where, _ := testkit.Request[*whereIs](ctx, tc.Node(0), id, &whoReq{})
	for i := range tc.Len() {
		if tc.Address(i) == where.Member {
			tc.Kill(i) // abrupt: its lease expires on its own
		}
	}
	// The grain is activated again elsewhere, after the wait-out.
	again, err := testkit.Request[*whereIs](ctx, tc.Node(tc.Up()[0]), id, &whoReq{})
	fmt.Println(err, again.Member != where.Member)
	fmt.Println("overlaps:", len(tc.Observer().Overlaps()))
	// Output:
	// <nil> true
	// overlaps: 0
}

// One grain, no cluster: the probe is the caller and everything runs on
// the deterministic system. IdentityOf and FencingTokenOf answer inside the
// grain; Reactivate starts a new activation with the next token.
func ExampleNewGrain() {
	t := exampleT()
	defer t.finish()

	store := testkit.NewFencedStore[int](nil)
	g := testkit.NewGrain(t, storedCounter(store), cluster.NewIdentity("stored", "alice"))
	fmt.Println(testkit.RequestGrain[*total](g, &addReq{N: 5}).N)
	fmt.Println(testkit.RequestGrain[*whereIs](g, &whoReq{}).Member)

	g.Reactivate() // the state comes back from the store
	fmt.Println(testkit.RequestGrain[*total](g, &addReq{N: 1}).N)
	fmt.Println(testkit.RequestGrain[*whereIs](g, &whoReq{}).Member)
	// Output:
	// 5
	// stored/alice 1.1
	// 6
	// stored/alice 1.2
}
