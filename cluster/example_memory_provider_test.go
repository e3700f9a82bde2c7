package cluster_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Two members share an in-memory registry driven by a manual clock; one
// leaves gracefully, the other vanishes and is removed when its lease
// expires.
func ExampleMemoryRegistry() {
	clock := scheduler.NewManualClock(time.Unix(0, 0))
	cfg := cluster.DefaultMemoryConfig()
	cfg.Clock = clock
	reg, err := cluster.NewMemoryRegistry(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	ctx := context.Background()

	a, _ := reg.Join(ctx, cluster.Member{ID: "a", Incarnation: 1, Address: "127.0.0.1:4001"})
	b, _ := reg.Join(ctx, cluster.Member{ID: "b", Incarnation: 1, Address: "127.0.0.1:4002"})
	c, _ := reg.Join(ctx, cluster.Member{ID: "c", Incarnation: 1, Address: "127.0.0.1:4003"})
	prev := <-a.Snapshots()
	fmt.Println("epoch", prev.Epoch, "members", len(prev.Members), "lease", a.Lease().Status)

	_ = b.Leave(ctx)
	next := <-a.Snapshots()
	_, left := cluster.Diff(prev, next)
	fmt.Println("epoch", next.Epoch, "left", left[0].Key(), "released", len(a.Released()))

	_ = c.Stop(ctx) // no leave: removed when its lease expires
	clock.Advance(cfg.LeaseTTL)
	last := <-a.Snapshots()
	_, left = cluster.Diff(next, last)
	fmt.Println("epoch", last.Epoch, "expired", left[0].Key())
	_ = a.Leave(ctx)
	// Output:
	// epoch 3 members 3 lease held
	// epoch 4 left b#1 released 1
	// epoch 5 expired c#1
}
