package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// Ping and Pong cross the wire as JSON; Hollywood would need protobuf
// messages here, fraktor-go takes either, but every type must be registered
// under the same name on both nodes. wrapperspb.StringValue shows the
// protobuf path (RegisterProto: its full name is the wire name).
type (
	Ping struct{ N int }
	Pong struct{ N int }
	// NotRegistered is never registered: sending it across fails.
	NotRegistered struct{}
)

// remoteNode starts a system with remote on a free loopback port.
func remoteNode(name string) (*actor.System, error) {
	ser := remote.NewSerializers()
	if err := remote.RegisterJSON[*Ping](ser, "hollywood.Ping"); err != nil {
		return nil, err
	}
	if err := remote.RegisterJSON[*Pong](ser, "hollywood.Pong"); err != nil {
		return nil, err
	}
	if err := ser.RegisterProto(&wrapperspb.StringValue{}); err != nil {
		return nil, err
	}
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0" // Hollywood: remote.New("127.0.0.1:4000", remote.NewConfig())
	cfg.SystemName = "hollywood"      // both nodes: the handshake refuses another name
	cfg.Serializers = ser
	return actor.NewSystem(actor.SystemConfig{Name: name, Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
}

// runRemoteServer is the server process: a named actor that answers, until
// its standard input is closed; then it shuts down gracefully.
func runRemoteServer() error {
	sys, err := remoteNode("server")
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	_, err = sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *Ping:
			c.Respond(&Pong{N: m.N})
		case *wrapperspb.StringValue:
			c.Respond(wrapperspb.String(strings.ToUpper(m.GetValue())))
		}
	}), "server")
	if err != nil {
		return err
	}
	fmt.Printf("listening %s\n", sys.Address())
	_, _ = io.Copy(io.Discard, os.Stdin) // until the client closes it
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return sys.Shutdown(ctx)
}

// runRemote is the client process: it starts the server process, talks to
// its actor by address and name, watches it and sees it go.
func runRemote() error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	server := exec.CommandContext(ctx, exe, "remote-server")
	server.Stderr = os.Stderr
	stdin, err := server.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := server.StdoutPipe()
	if err != nil {
		return err
	}
	if err := server.Start(); err != nil {
		return err
	}
	defer func() { _ = stdin.Close(); _ = server.Wait() }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		return fmt.Errorf("reading the server's address: %w", err)
	}
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		return fmt.Errorf("unexpected line from the server: %q", line)
	}

	sys, err := remoteNode("client")
	if err != nil {
		return err
	}
	defer sys.Shutdown(context.Background())
	fmt.Printf("1. a server process at %s, this client at %s\n", addr, sys.Address())

	// Hollywood: actor.NewPID(addr, "server/<id>"); here the name alone.
	srv := actor.NewPID(addr, "server")
	done := make(chan string, 8)
	client := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started:
			c.Watch(srv)
			c.Request(srv, &Ping{N: 1}) // c.Send would carry no sender: no reply
		case *Pong:
			if m.N < 3 {
				c.Request(srv, &Ping{N: m.N + 1})
				return
			}
			done <- "  ping-pong: 3 pongs"
		case *actor.Terminated:
			done <- fmt.Sprintf("  watcher: %s terminated (%s)", m.Who.ID, m.Why)
		}
	}))
	_ = client
	fmt.Println(<-done)

	fmt.Println("2. requests from outside, JSON and protobuf")
	pong, err := actor.Request[*Pong](ctx, sys.Root(), srv, &Ping{N: 42})
	if err != nil {
		return err
	}
	fmt.Printf("  pong %d\n", pong.N)
	s, err := actor.Request[*wrapperspb.StringValue](ctx, sys.Root(), srv, wrapperspb.String("hollywood"))
	if err != nil {
		return err
	}
	fmt.Printf("  upper: %s\n", s.GetValue())
	_, err = actor.Request[any](ctx, sys.Root(), srv, &NotRegistered{})
	fmt.Printf("  unregistered type refused: %v (%v)\n", errors.Is(err, remote.ErrUnknownType), err)

	fmt.Println("3. the server process shuts down")
	if err := stdin.Close(); err != nil {
		return err
	}
	fmt.Println(<-done)
	if err := server.Wait(); err != nil {
		return fmt.Errorf("server process: %w", err)
	}
	fmt.Println("  server process exited 0")
	return nil
}
