package remote_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// Protobuf messages between two systems: every node registers the types it
// sends or receives (the global protobuf registry is not consulted, unlike
// protoactor-go), and a named actor is addressed from the other node as
// actor.NewPID(address, name). A request with a type that is not registered
// fails at once with remote.ErrUnknownType.
func ExampleSerializers_RegisterProto() {
	ctx := context.Background()
	network := remote.NewMemoryNetwork()
	newSystem := func(addr string) *actor.System {
		ser := remote.NewSerializers()
		if err := ser.RegisterProto(&wrapperspb.StringValue{}); err != nil {
			panic(err)
		}
		cfg := remote.DefaultConfig()
		cfg.ListenAddress = addr
		cfg.SystemName = "chat" // both nodes: the handshake refuses another name
		cfg.Serializers = ser
		sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{
			remote.Install(cfg, remote.WithTransport(network)), // without it: TCP
		}})
		if err != nil {
			panic(err)
		}
		return sys
	}
	a, b := newSystem("node-a:1"), newSystem("node-b:1")
	defer a.Shutdown(ctx)
	defer b.Shutdown(ctx)

	_, _ = b.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*wrapperspb.StringValue); ok {
			c.Respond(wrapperspb.String("welcome, " + m.GetValue()))
		}
	}), "lobby")

	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lobby := actor.NewPID("node-b:1", "lobby")
	reply, err := actor.Request[*wrapperspb.StringValue](rctx, a.Root(), lobby, wrapperspb.String("ada"))
	fmt.Println(reply.GetValue(), err)

	_, err = actor.Request[*wrapperspb.StringValue](rctx, a.Root(), lobby, wrapperspb.Int64(7))
	fmt.Println(errors.Is(err, remote.ErrUnknownType))
	// Output:
	// welcome, ada <nil>
	// true
}
