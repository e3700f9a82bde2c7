package cluster_test

import (
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
)

// A node resolves grains through its partition identity lookup: the first
// Get activates on the rendezvous owner, the next is served from the
// PidCache.
func ExamplePartitionIdentityLookup() {
	lookup, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithSelf("node-a"))
	if err != nil {
		panic(err)
	}
	if err := lookup.SetupMember([]string{"account"}); err != nil {
		panic(err)
	}
	view := cluster.NewTopology(1, []cluster.Member{
		{ID: "node-a", Incarnation: 1, Address: "10.0.0.1:4000", Kinds: []string{"account"}},
		{ID: "node-b", Incarnation: 1, Address: "10.0.0.2:4000", Kinds: []string{"account"}},
	})
	if err := lookup.UpdateTopology(view); err != nil {
		panic(err)
	}
	now := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	id := cluster.NewIdentity("account", "42")
	pid, _ := lookup.Get(id, now)
	fmt.Println(pid)
	for _, e := range lookup.DrainEvents() {
		fmt.Println(e.Kind, e.Identity, e.Owner)
	}
	again, _ := lookup.Get(id, now.Add(time.Second))
	fmt.Println(again == pid, len(lookup.DrainEvents()))
	// Output:
	// 10.0.0.2:4000/partition-activator/account/42
	// activated account/42 node-b#1
	// true 0
}

func ExampleHashConfig_Strategy() {
	view := cluster.NewTopology(1, []cluster.Member{
		{ID: "node-a", Kinds: []string{"cart"}, Weight: 1},
		{ID: "node-b", Kinds: []string{"cart"}, Weight: 3},
	})
	ring := cluster.HashConfig{Seed: cluster.DefaultHashSeed, Weighted: true}.Strategy().Build(view)
	owner, _ := ring.Owner(cluster.NewIdentity("cart", "x0"))
	fmt.Println(owner.ID)
	_, err := ring.Owner(cluster.NewIdentity("account", "1"))
	fmt.Println(err)
	// Output:
	// node-b
	// cluster: no member hosts this kind
}
