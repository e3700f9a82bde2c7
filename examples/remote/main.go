package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// Ping and Pong cross the network as JSON: both nodes register them under
// the same names.
type (
	Ping struct{ N int }
	Pong struct{ N int }
)

func serializers() (*remote.Serializers, error) {
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*Ping](ser, "example.Ping"); err != nil {
		return nil, err
	}
	if err := remote.RegisterJSON[*Pong](ser, "example.Pong"); err != nil {
		return nil, err
	}
	return ser, nil
}

// ponger answers every Ping with a Pong; node B offers it for remote spawn.
func ponger() actor.Actor {
	return actor.ReceiveFunc(func(c actor.Context) {
		if p, ok := c.Message().(*Ping); ok {
			fmt.Printf("  [%s] ping %d from %s\n", c.Self(), p.N, c.Sender())
			c.Respond(&Pong{N: p.N})
		}
	})
}

// startNode starts a system with the remote extension on a free loopback port.
func startNode(name string, kinds map[string]*actor.Props) (*actor.System, error) {
	ser, err := serializers()
	if err != nil {
		return nil, err
	}
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0"
	cfg.Serializers = ser
	cfg.Kinds = kinds
	cfg.GiveUpAfter = time.Second
	return actor.NewSystem(actor.SystemConfig{Name: name, Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	a, err := startNode("node-a", nil)
	if err != nil {
		return err
	}
	defer a.Shutdown(context.Background())
	b, err := startNode("node-b", map[string]*actor.Props{"ponger": actor.PropsFromProducer(ponger)})
	if err != nil {
		return err
	}
	bAlive := true
	defer func() {
		if bAlive {
			b.Shutdown(context.Background())
		}
	}()
	fmt.Printf("node A at %s, node B at %s\n", a.Address(), b.Address())

	// 1. Remote spawn: A asks B for an actor of kind "ponger".
	fmt.Println("1. remote spawn")
	pong, err := remote.Get(a).SpawnNamed(ctx, b.Address(), "ponger-1", "ponger")
	if err != nil {
		return err
	}
	fmt.Printf("  spawned %s\n", pong)
	_, err = remote.Get(a).SpawnNamed(ctx, b.Address(), "", "no-such-kind")
	fmt.Printf("  unknown kind refused: %v\n", errors.Is(err, remote.ErrUnknownKind))

	// 2. Ping-pong between an actor on A and the spawned actor on B; the
	//    pinger also watches it.
	fmt.Println("2. ping-pong and watch")
	done := make(chan string, 4)
	pinger := a.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(pong)
			c.Request(pong, &Ping{N: 1})
		case *Pong:
			fmt.Printf("  [%s] pong %d\n", c.Self(), m.N)
			if m.N < 3 {
				c.Request(pong, &Ping{N: m.N + 1})
			} else {
				done <- "ping-pong done"
			}
		case *actor.Terminated:
			done <- fmt.Sprintf("%s terminated (%s)", m.Who, m.Why)
		}
	}))
	if err := await(ctx, done); err != nil {
		return err
	}

	// 3. A stops the remote actor; the pinger's watch tells it.
	fmt.Println("3. remote stop")
	a.Root().Stop(pong)
	if err := await(ctx, done); err != nil {
		return err
	}

	// 4. A request/response from outside any actor, with a future.
	fmt.Println("4. request from the root context")
	second, err := remote.Get(a).SpawnNamed(ctx, b.Address(), "ponger-2", "ponger")
	if err != nil {
		return err
	}
	reply, err := actor.Request[*Pong](ctx, a.Root(), second, &Ping{N: 42})
	if err != nil {
		return err
	}
	fmt.Printf("  reply: pong %d\n", reply.N)

	// 5. Node B shuts down: it says goodbye, so A's watchers of its actors
	//    hear Terminated{AddressTerminated} at once.
	fmt.Println("5. node B shuts down")
	ends := make(chan *remote.EndpointTerminated, 1)
	sub := actor.Subscribe(a.EventStream(), func(e *remote.EndpointTerminated) { ends <- e })
	defer a.EventStream().Unsubscribe(sub)
	a.Root().Send(pinger, &actor.PoisonPill{}) // the pinger is done
	watcher := a.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(second)
			c.Request(second, &Ping{N: 0}) // travels behind the watch
		case *Pong:
			done <- "watch in place"
		case *actor.Terminated:
			done <- fmt.Sprintf("%s terminated (%s)", m.Who, m.Why)
		}
	}))
	if err := await(ctx, done); err != nil {
		return err
	}
	bAlive = false
	if err := b.Shutdown(ctx); err != nil {
		return err
	}
	if err := await(ctx, done); err != nil {
		return err
	}
	select {
	case e := <-ends:
		fmt.Printf("  event: endpoint %s terminated: %v\n", e.Address, e.Reason)
	case <-ctx.Done():
		return ctx.Err()
	}
	a.Root().Stop(watcher)

	// 6. Sending to the gone node: a dead letter with the reason.
	fmt.Println("6. sending to a node that is gone")
	_, err = actor.Request[*Pong](ctx, a.Root(), second, &Ping{N: 7})
	fmt.Printf("  request failed: %v\n", err)
	fmt.Printf("dead letters on A: %d\n", a.DeadLetters())
	return nil
}

// await prints the next line from done, or fails when ctx ends.
func await(ctx context.Context, done <-chan string) error {
	select {
	case s := <-done:
		fmt.Println("  " + s)
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
