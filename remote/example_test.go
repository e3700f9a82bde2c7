package remote_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// Two nodes on an in-memory network exchange a message; the same code runs
// over TCP when no transport option is given.
func ExampleNode() {
	ctx := context.Background()
	network := remote.NewMemoryNetwork()
	got := make(chan remote.Envelope, 1)

	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "node-b:7000"
	b, err := remote.NewNode(cfg, remote.Hooks{
		Deliver: func(from remote.Peer, env remote.Envelope) { got <- env },
	}, remote.WithTransport(network))
	if err != nil {
		panic(err)
	}
	if err := b.Start(ctx); err != nil {
		panic(err)
	}
	defer b.Close(ctx)

	cfg.ListenAddress = "node-a:7000"
	a, err := remote.NewNode(cfg, remote.Hooks{}, remote.WithTransport(network))
	if err != nil {
		panic(err)
	}
	if err := a.Start(ctx); err != nil {
		panic(err)
	}
	defer a.Close(ctx)

	err = a.Send(b.Address(), remote.Envelope{
		Target:  remote.PIDRef{Address: b.Address(), ID: "watcher"},
		Sender:  remote.PIDRef{Address: a.Address(), ID: "asker"},
		Message: &remote.WatchRequest{Watcher: remote.PIDRef{Address: a.Address(), ID: "asker"}, Watchee: remote.PIDRef{Address: b.Address(), ID: "worker"}},
	})
	if err != nil {
		panic(err)
	}
	env := <-got
	fmt.Printf("%s got %T from %s\n", env.Target, env.Message, env.Sender)
	// Output: node-b:7000/watcher got *remote.WatchRequest from node-a:7000/asker
}

// Registering application message types: protobuf messages by full name,
// other Go types under an explicit JSON name.
func ExampleRegisterJSON() {
	type Deposit struct{ Amount int }
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*Deposit](ser, "bank.Deposit"); err != nil {
		panic(err)
	}
	id, name, payload, _ := ser.Serialize(nil, &Deposit{Amount: 5})
	msg, _ := ser.Deserialize(id, name, payload)
	fmt.Println(id, name, string(payload), msg.(*Deposit).Amount)
	_, _, _, err := ser.Serialize(nil, struct{}{})
	fmt.Println(err)
	// Output:
	// json bank.Deposit {"Amount":5} 5
	// remote: unknown message type: struct {} is not registered (register it on every node that sends or receives it: Serializers.RegisterProto, remote.RegisterJSON)
}

// Two actor systems with the remote extension: a request to an actor on the
// other system, and a remote spawn by kind. The in-memory network keeps the
// example self-contained; without WithTransport the same code runs over TCP.
func ExampleInstall() {
	ctx := context.Background()
	network := remote.NewMemoryNetwork()
	type Greet struct{ Name string }
	newSystem := func(addr string, kinds map[string]*actor.Props) *actor.System {
		ser := remote.NewSerializers()
		if err := remote.RegisterJSON[*Greet](ser, "example.Greet"); err != nil {
			panic(err)
		}
		cfg := remote.DefaultConfig()
		cfg.ListenAddress = addr
		cfg.Serializers = ser
		cfg.Kinds = kinds
		sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{
			remote.Install(cfg, remote.WithTransport(network)),
		}})
		if err != nil {
			panic(err)
		}
		return sys
	}
	greeter := actor.PropsFromFunc(func(c actor.Context) {
		if g, ok := c.Message().(*Greet); ok {
			c.Respond(&Greet{Name: "hello " + g.Name + " from " + c.Self().Address})
		}
	})
	a := newSystem("node-a:1", nil)
	defer a.Shutdown(ctx)
	b := newSystem("node-b:1", map[string]*actor.Props{"greeter": greeter})
	defer b.Shutdown(ctx)

	pid, err := remote.Get(a).SpawnNamed(ctx, "node-b:1", "greeter-1", "greeter")
	if err != nil {
		panic(err)
	}
	fmt.Println("spawned", pid)
	reply, err := actor.Request[*Greet](ctx, a.Root(), pid, &Greet{Name: "a"})
	if err != nil {
		panic(err)
	}
	fmt.Println(reply.Name)
	_, err = remote.Get(a).SpawnNamed(ctx, "node-b:1", "", "no-such-kind")
	fmt.Println(errors.Is(err, remote.ErrUnknownKind))
	// Output:
	// spawned node-b:1/greeter-1
	// hello a from node-b:1
	// true
}
