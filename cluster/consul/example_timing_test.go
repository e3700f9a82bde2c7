package consul_test

import (
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/consul"
)

// A shorter lease timing for a local agent started with
// session_ttl_min = "1s" (docs/membership.md, "Running a local Consul"):
// the provider reports it to the cluster, whose Validate checks the
// single-activation relations against its stop budget and pause. New does
// not contact the agent.
func ExampleConfig_shortTiming() {
	cfg := consul.DefaultConfig()
	cfg.API.Address = "127.0.0.1:18500"
	cfg.Cluster = "shop"
	cfg.SessionTTL = 3 * time.Second           // T
	cfg.RenewInterval = 500 * time.Millisecond // R
	cfg.RequestTimeout = time.Second
	cfg.FencePeriod = 2 * time.Second // F
	p, err := consul.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%+v\n", p.LeaseTiming())
	ccfg := cluster.DefaultConfig()
	ccfg.Name, ccfg.Provider = "shop", p
	fmt.Println("cluster:", ccfg.Validate())

	// A fence period too close to the TTL: the backend could drop the
	// member while it still serves its grains (F + S past T).
	cfg.FencePeriod = 2800 * time.Millisecond
	p, err = consul.New(cfg) // the provider's own relation holds: R + request timeout < F < T
	if err != nil {
		fmt.Println(err)
		return
	}
	ccfg.Provider = p
	err = ccfg.Validate()
	fmt.Println(errors.Is(err, cluster.ErrInvalidConfig), err)
	// Output:
	// {RenewInterval:500ms RenewTimeout:1s FencePeriod:2s LeaseTTL:3s}
	// cluster: <nil>
	// true cluster: invalid config: StopBudget 500ms: (FencePeriod 2.8s + StopBudget)(1+ρ) must be < LeaseTTL 3s (1−ρ)
}
