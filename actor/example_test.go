package actor_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/extension"
)

type Hello struct{ Who string }

func ExampleNewSystem() {
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "shop"})
	if err != nil {
		panic(err)
	}
	defer sys.Shutdown(context.Background())
	fmt.Println(sys.Name())
	// Output: shop
}

func ExampleRootContext_Spawn() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	done := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Hello); ok {
			fmt.Println("hello,", m.Who)
			close(done)
		}
	}))
	sys.Root().Send(pid, &Hello{Who: "world"})
	<-done
	// Output: hello, world
}

func ExampleRequest() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	greeter := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Hello); ok {
			c.Respond("hello, " + m.Who)
		}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	reply, err := actor.Request[string](ctx, sys.Root(), greeter, &Hello{Who: "fraktor"})
	fmt.Println(reply, err)
	// Output: hello, fraktor <nil>
}

func ExampleOneForOne() {
	sys, _ := actor.NewSystem(actor.SystemConfig{
		// Top-level actors are restarted at most 3 times a minute.
		GuardianStrategy: actor.OneForOne(3, time.Minute, actor.DefaultDecider),
	})
	defer sys.Shutdown(context.Background())

	restarted := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *actor.Restarting:
			close(restarted)
		case string:
			panic("bad input")
		}
	}))
	sys.Root().Send(pid, "crash")
	<-restarted
	fmt.Println("restarted after a panic")
	// Output: restarted after a panic
}

// greeterExt is a small custom extension: a system actor that greets.
type greeterExt struct{ greeting string }

func (greeterExt) Name() string       { return "greeter" }
func (greeterExt) Requires() []string { return nil }
func (greeterExt) Enabled() bool      { return true }
func (g greeterExt) Validate() error {
	if g.greeting == "" {
		return fmt.Errorf("greeting must not be empty")
	}
	return nil
}

type greeter struct{ pid *actor.PID }

func (greeter) Shutdown(context.Context) error { return nil }

func (g greeterExt) Install(_ context.Context, host actor.Host) (actor.Extension, error) {
	pid, err := host.SpawnSystem(actor.PropsFromFunc(func(c actor.Context) {
		if who, ok := c.Message().(string); ok {
			c.Respond(g.greeting + ", " + who)
		}
	}), "greeter")
	return &greeter{pid: pid}, err
}

func Example_extension() {
	sys, err := actor.NewSystem(actor.SystemConfig{
		Extensions: []actor.ExtensionInstaller{greeterExt{greeting: "welcome"}},
	})
	if err != nil {
		panic(err)
	}
	defer sys.Shutdown(context.Background())

	g, _ := extension.Lookup[*greeter](sys.Extensions(), "greeter")
	reply, _ := actor.Request[string](context.Background(), sys.Root(), g.pid, "ada")
	fmt.Println(reply)
	// Output: welcome, ada
}

func ExampleWithReceiveMiddleware() {
	sys, _ := actor.NewSystem(actor.SystemConfig{})
	defer sys.Shutdown(context.Background())

	// audit wraps every message delivery of the actor.
	audit := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(c actor.Context) {
			if s, ok := c.Message().(string); ok {
				fmt.Println("audit:", s)
			}
			next(c)
		}
	}
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(len(s))
		}
	}, actor.WithReceiveMiddleware(audit)))
	n, _ := actor.Request[int](context.Background(), sys.Root(), pid, "hello")
	fmt.Println(n)
	// Output:
	// audit: hello
	// 5
}
