package consul_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/consul"
)

// Join a cluster through the local Consul agent, follow its views and lease,
// and leave gracefully. (Compiled, not run: it needs an agent.)
func ExampleProvider() {
	cfg := consul.DefaultConfig() // CONSUL_HTTP_ADDR, CONSUL_HTTP_TOKEN, ...
	cfg.Cluster = "shop"
	p, err := consul.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	self := cluster.Member{ID: "node-1", Incarnation: uint64(time.Now().UnixNano()), Address: "10.0.0.1:4000", Kinds: []string{"cart"}}
	m, err := p.Join(ctx, self)
	if err != nil {
		fmt.Println(err) // wraps consul.ErrUnreachable when no agent answers
		return
	}
	var prev cluster.Topology
	for {
		select {
		case top := <-m.Snapshots():
			joined, left := cluster.Diff(prev, top)
			fmt.Println("epoch", top.Epoch, "joined", len(joined), "left", len(left))
			prev = top
		case ev := <-m.Events():
			if ev.Kind == cluster.MembershipEventLeaseLost {
				// Stop serving before ev.Lease.Deadline.
				fmt.Println("lease lost; guaranteed until", ev.Lease.Deadline)
			}
		case <-ctx.Done():
			_ = m.Leave(context.Background())
			return
		}
	}
}
