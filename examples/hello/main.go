package main

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Messages that cross members are serialized: JSON here (protobuf works too).
type (
	Hello struct{ From string }
	Reply struct{ Text string }
)

// greeter is a grain: one activation per ID, cluster-wide, created on first use.
func greeter() actor.Actor {
	count := 0
	return actor.ReceiveFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Hello); ok {
			count++
			id, _ := cluster.IdentityOf(c)
			c.Respond(&Reply{Text: fmt.Sprintf("hello %s, I am %s on %s (greeting #%d)", m.From, id.ID, c.Self().Address, count)})
		}
	})
}

// startMember starts one member: an actor system with remote (loopback TCP)
// and the cluster, hosting the greeter kind.
func startMember(reg cluster.Provider) (*actor.System, *cluster.Cluster) {
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*Hello](ser, "gs.Hello"); err != nil {
		log.Fatal(err)
	}
	if err := remote.RegisterJSON[*Reply](ser, "gs.Reply"); err != nil {
		log.Fatal(err)
	}
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress = "127.0.0.1:0" // any free port
	rcfg.SystemName = "hello"          // the cluster's name
	rcfg.Serializers = ser
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "hello", Extensions: []actor.ExtensionInstaller{
		remote.Install(rcfg),
		cluster.Install(cluster.Config{Name: "hello", Provider: reg,
			Kinds: []cluster.Kind{cluster.NewKind("greeter", actor.PropsFromProducer(greeter))}}),
	}})
	if err != nil {
		log.Fatal(err)
	}
	return sys, cluster.Get(sys)
}

func main() {
	// The in-memory registry stands in for Consul (cluster/consul) here.
	reg, err := cluster.NewMemoryRegistry(cluster.DefaultMemoryConfig())
	if err != nil {
		log.Fatal(err)
	}
	defer reg.Close()
	sysA, a := startMember(reg)
	sysB, b := startMember(reg)
	defer sysA.Shutdown(context.Background()) // leaves the cluster gracefully
	defer sysB.Shutdown(context.Background())

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Wait until each member sees both: a greeter activated before that
	// would move to its owner, with a fresh count, once they do.
	for _, c := range []*cluster.Cluster{a, b} {
		if err := c.WaitForMembers(ctx, 2); err != nil {
			log.Fatal(err)
		}
	}
	for _, id := range []string{"alice", "bob", "carol", "dave"} {
		for _, c := range []*cluster.Cluster{a, b} {
			r, err := cluster.Request[*Reply](ctx, c, cluster.NewIdentity("greeter", id), &Hello{From: c.Self().Address})
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(r.Text)
		}
	}
	fmt.Printf("activations: %d on A, %d on B\n", a.ActiveCount(), b.ActiveCount())
}
