package main

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/exampletest"
)

func TestMain(m *testing.M) { exampletest.Main(m, main) }

// The two-node program shows each step it announces: a remote spawn (and
// an unknown kind refused), a ping-pong, a remote stop its watcher hears,
// a request, the watcher told when the other node shuts down, and a
// request to the gone node failing as a dead letter; it exits 0.
func TestRemoteSteps(t *testing.T) {
	out, err := exampletest.Run(time.Minute)
	require.NoError(t, err)
	t.Log(out)
	require.Contains(t, out, "  unknown kind refused: true")
	require.Regexp(t, `(?m)^  \[\S+/ponger-1\] ping 3 from `, out)
	require.Contains(t, out, "  ping-pong done")
	require.Regexp(t, `(?m)^  \S+/ponger-1 terminated \(Stopped\)$`, out)
	require.Contains(t, out, "  reply: pong 42")
	require.Regexp(t, `(?m)^  \S+/ponger-2 terminated \(AddressTerminated\)$`, out)
	require.Regexp(t, `(?m)^  request failed: actor: dead letter: `, out)
}
