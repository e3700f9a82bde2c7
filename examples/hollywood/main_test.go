package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m, main) }

// runProgram runs the program with args, as `go run ./examples/hollywood
// args...` would: this test binary as a child process that exampletest.Main
// turns into the program (FRAKTOR_EXAMPLE_CHILD is exampletest's marker;
// the child's flag.Parse takes the -test flag and leaves args). The remote
// program starts the binary once more as its server process, which
// inherits the marker.
func runProgram(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"-test.run=^$"}, args...)...)
	cmd.Env = append(os.Environ(), "FRAKTOR_EXAMPLE_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, ctx.Err(), "the program ran longer than a minute:\n%s", out)
	require.NoError(t, err, "the program failed:\n%s", out)
	t.Log(string(out))
	return string(out)
}

// The local port: a panic restarts the counter with a fresh instance (the
// restart reported through the EventStream), a request to a busy actor
// times out, the fourth panic stops it (OneForOne(3, …) as
// WithMaxRestarts(3)), requests and sends to it are dead letters the
// monitor hears of, and Poison handles the queued messages first.
func TestHollywoodLocal(t *testing.T) {
	out := runProgram(t, "local")
	for _, want := range []string{
		"  get = 5 (err <nil>)",
		"  event: restarted counter (boom 1)",
		"  get after restart = 0 (err <nil>)",
		"  timed out: true (actor: timeout)",
		"  get once released = 0 (err <nil>)",
		"  event: restarted counter (boom 2)",
		"  event: restarted counter (boom 3)",
		"  [counter] stopped",
		"  request to the stopped actor: dead letter true",
		"  event: dead letter to counter: *main.Get",
		"  event: dead letter to counter: *main.Add",
		"  the middleware saw 101 Add messages",
	} {
		require.Contains(t, out, want)
	}
	require.NotContains(t, out, "boom 4)", "a fourth restart")
	require.Regexp(t, `(?s)\[counter-2\] started\n  \[counter-2\] stopped\n`, out)
}

// The remote port: two OS processes on loopback TCP; a ping-pong between
// an actor and a named actor of the other process, requests with a JSON
// and a protobuf message, an unregistered type refused with
// remote.ErrUnknownType, and the watcher told AddressTerminated when the
// server process shuts down; the server exits 0.
func TestHollywoodRemote(t *testing.T) {
	out := runProgram(t, "remote")
	require.Regexp(t, `(?m)^1\. a server process at 127\.0\.0\.1:\d+, this client at 127\.0\.0\.1:\d+$`, out)
	for _, want := range []string{
		"  ping-pong: 3 pongs",
		"  pong 42",
		"  upper: HOLLYWOOD",
		"  unregistered type refused: true",
		"*main.NotRegistered is not registered (register it on every node",
		"  watcher: server terminated (AddressTerminated)",
		"  server process exited 0",
	} {
		require.Contains(t, out, want)
	}
}

// The cluster port: three members, six players each called from every
// member, one activation each (the program fails when a player answers
// from two members), and a player whose member left activated again on
// another member, its state started over.
func TestHollywoodCluster(t *testing.T) {
	out := runProgram(t, "cluster")
	for _, p := range []string{"alice", "bob", "carol", "dave", "erin", "frank"} {
		require.Contains(t, out, fmt.Sprintf("  %s: 3 points\n", p))
	}
	require.Contains(t, out, "  activations: 6\n")
	require.Contains(t, out, "  alice moved: true; points 10 ")
}

// Without an argument the program runs the three ports in turn.
func TestHollywoodAll(t *testing.T) {
	out, err := exampletest.Run(time.Minute)
	require.NoError(t, err)
	for _, want := range []string{"the middleware saw 101 Add messages", "server process exited 0", "alice moved: true"} {
		require.Contains(t, out, want)
	}
}
