package testkit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
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

// A cluster on virtual time: NewCluster returns it converged (it moves
// the clock while it waits), and Eventually moves the clock while a
// condition is false, here through a killed member's lease expiry, up to
// a budget of virtual time. The test never moves the clock by hand, and
// seconds of virtual time take milliseconds.
func ExampleTestCluster_Eventually() {
	t := exampleT()
	defer t.finish()

	tc := testkit.NewCluster(t, testkit.Nodes(3), testkit.VirtualTime(),
		testkit.Kinds(plainCounter()), testkit.Serializers(counterMessages))
	fmt.Println("members:", len(tc.Node(0).Members()))

	id := cluster.NewIdentity("counter", "7")
	f := tc.Node(0).RequestFuture(id, &addReq{N: 2}, 0)
	tc.Eventually(func() bool { return isDone(f) }, time.Second, "the add is answered")
	res, err := f.Result()
	fmt.Println(res.(*total).N, err)

	killed := tc.Now()
	tc.Kill(2)
	tc.Eventually(func() bool { return len(tc.Node(0).Members()) == 2 }, 5*time.Second,
		"member 0 sees member 2 gone")
	lease := testkit.VirtualRegistry().LeaseTTL
	fmt.Println("members:", len(tc.Node(0).Members()),
		"after at least the lease less one renewal:", tc.Now().Sub(killed) >= lease-testkit.VirtualRegistry().RenewInterval)
	// Output:
	// members: 3
	// 2 <nil>
	// members: 2 after at least the lease less one renewal: true
}

// isDone reports whether f has completed.
func isDone(f *actor.Future) bool {
	select {
	case <-f.Done():
		return true
	default:
		return false
	}
}
