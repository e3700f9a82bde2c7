package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Messages of the examples' grains.
type (
	Deposit  struct{ Amount int }
	Balance  struct{}
	Amount   struct{ N int }
	Hello    struct{}
	Greeting struct {
		Identity string
		HasToken bool
	}
)

// accountKind is a grain kind whose activations sum deposits.
func accountKind() cluster.Kind {
	return cluster.NewKind("account", actor.PropsFromProducer(func() actor.Actor {
		total := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *Deposit:
				total += m.Amount
				c.Respond(&Amount{N: total})
			case *Balance:
				c.Respond(&Amount{N: total})
			}
		})
	}))
}

// startBankMember starts a system with remote on loopback and the cluster
// extension hosting kinds, and waits until the cluster is ready.
func startBankMember(ctx context.Context, reg cluster.Provider, kinds ...cluster.Kind) (*actor.System, *cluster.Cluster, error) {
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0"
	rcfg.SystemName = "bank"
	sys, err := actor.NewSystem(actor.SystemConfig{
		Name: "bank",
		Extensions: []actor.ExtensionInstaller{
			remote.Install(rcfg),
			cluster.Install(cluster.Config{Name: "bank", Provider: reg, Kinds: kinds}),
		},
	})
	if err != nil {
		return nil, nil, err
	}
	c := cluster.Get(sys)
	if err := c.WaitForMembers(ctx, 1); err != nil { // ready, seeing itself
		_ = sys.Shutdown(ctx)
		return nil, nil, err
	}
	return sys, c, nil
}

// A one-member cluster: remote on a loopback port, the in-memory registry
// as membership provider, and a kind of grain. The system's Shutdown
// leaves the cluster first.
func ExampleInstall() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()

	sys, c, err := startBankMember(ctx, reg, accountKind())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("status:", c.Status())
	fmt.Println("members:", len(c.Members()), "kinds:", c.Self().Kinds)

	if err := sys.Shutdown(ctx); err != nil {
		fmt.Println(err)
	}
	fmt.Println("status:", c.Status())
	// Output:
	// status: ready
	// members: 1 kinds: [account]
	// status: stopped
}

// Request activates the grain on its owner on first use and routes later
// requests to the same activation through the PidCache.
func ExampleRequest() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	sys, c, err := startBankMember(ctx, reg, accountKind())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()

	alice := cluster.NewIdentity("account", "alice")
	for _, n := range []int{5, 7} {
		if _, err := cluster.Request[*Amount](ctx, c, alice, &Deposit{Amount: n}); err != nil {
			fmt.Println(err)
			return
		}
	}
	total, err := cluster.Request[*Amount](ctx, c, alice, &Balance{})
	fmt.Println(total.N, err)
	fmt.Println("activations:", c.ActiveCount())

	_, err = cluster.Request[*Amount](ctx, c, cluster.NewIdentity("loan", "1"), &Balance{})
	fmt.Println(errors.Is(err, cluster.ErrNoSuchKind))
	// Output:
	// 12 <nil>
	// activations: 1
	// true
}

// A grain reads its own identity and fencing token from its Context.
func ExampleIdentityOf() {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reg.Close()
	greeter := cluster.NewKind("greeter", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Hello); ok {
			id, _ := cluster.IdentityOf(c)
			token, _ := cluster.FencingTokenOf(c)
			c.Respond(&Greeting{Identity: id.String(), HasToken: !token.IsZero()})
		}
	}))
	sys, c, err := startBankMember(ctx, reg, greeter)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(ctx) }()

	g, err := cluster.Request[*Greeting](ctx, c, cluster.NewIdentity("greeter", "bob"), &Hello{})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(g.Identity, "token:", g.HasToken)
	// Output:
	// greeter/bob token: true
}
