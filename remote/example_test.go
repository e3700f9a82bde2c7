package remote_test

import (
	"context"
	"fmt"

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
		Message: &remote.Watch{Watcher: remote.PIDRef{Address: a.Address(), ID: "asker"}, Watchee: remote.PIDRef{Address: b.Address(), ID: "worker"}},
	})
	if err != nil {
		panic(err)
	}
	env := <-got
	fmt.Printf("%s got %T from %s\n", env.Target, env.Message, env.Sender)
	// Output: node-b:7000/watcher got *remote.Watch from node-a:7000/asker
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
	// remote: unknown message type: struct {} is not registered
}
