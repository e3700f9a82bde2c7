package remote_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

type (
	Track struct{ Device string }
	Ack   struct{ Device, Node string }
)

// Akka remote deployment and remote death watch over loopback TCP: node A
// spawns a device actor on node B by kind (Akka's Props.withDeploy /
// RemoteScope; here a kind registered on B), watches it, talks to it, and
// then B dies without a goodbye (a crash: Shutdown with a context already
// ended closes every socket at once). A's watcher gets Terminated with
// AddressTerminated once remote's GiveUpAfter has passed without a
// connection (Akka's failure detector plus quarantine); a request to the
// dead node fails then instead of waiting for its deadline.
func ExampleRemote_SpawnNamed_akkaRemoteWatch() {
	newNode := func(kinds map[string]*actor.Props) *actor.System {
		ser := remote.NewSerializers()
		if err := remote.RegisterJSON[*Track](ser, "iot.Track"); err != nil {
			panic(err)
		}
		if err := remote.RegisterJSON[*Ack](ser, "iot.Ack"); err != nil {
			panic(err)
		}
		cfg := remote.DefaultConfig()
		cfg.ListenAddress = "127.0.0.1:0"
		cfg.SystemName = "iot" // the same on every node
		cfg.Serializers = ser
		cfg.Kinds = kinds
		cfg.GiveUpAfter = 300 * time.Millisecond // how long a silent peer may stay unreachable
		sys, err := actor.NewSystem(actor.SystemConfig{Name: "iot", Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
		if err != nil {
			panic(err)
		}
		return sys
	}
	deviceKind := actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Track); ok {
			c.Respond(&Ack{Device: m.Device, Node: c.Self().Address})
		}
	})
	a := newNode(nil)
	defer a.Shutdown(context.Background())
	b := newNode(map[string]*actor.Props{"device": deviceKind})

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	dev, err := remote.Get(a).SpawnNamed(ctx, b.Address(), "device-42", "device")
	if err != nil {
		panic(err)
	}
	fmt.Println("spawned on B:", dev.Address == b.Address(), dev.ID)

	events := make(chan string, 4)
	a.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(dev)
			c.Request(dev, &Track{Device: "42"}) // sent after the watch, on the same connection
		case *Ack:
			events <- fmt.Sprintf("ack for device %s from B: %v", m.Device, m.Node == b.Address())
		case *actor.Terminated:
			events <- fmt.Sprintf("terminated: %s", m.Why)
		}
	}))
	fmt.Println(<-events)

	// B crashes: no goodbye.
	dead, kill := context.WithCancel(context.Background())
	kill()
	_ = b.Shutdown(dead)
	<-b.Terminated()
	fmt.Println(<-events)

	_, err = actor.Request[*Ack](ctx, a.Root(), dev, &Track{Device: "42"})
	fmt.Println("request to the dead node:", errors.Is(err, actor.ErrDeadLetter), errors.Is(err, remote.ErrPeerUnreachable))
	// Output:
	// spawned on B: true device-42
	// ack for device 42 from B: true
	// terminated: AddressTerminated
	// request to the dead node: true true
}
