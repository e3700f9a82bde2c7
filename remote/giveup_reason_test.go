package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A peer whose handshake refuses this node (another system's name) until
// GiveUpAfter: what fails then says why, not only "unreachable". Before,
// a request read "remote: peer unreachable: … unreachable for 300ms" and
// the reason was only in an Info log and an EventHandshakeRefused.
func TestGiveUpNamesTheRefusedHandshake(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.SystemName = "alpha"
	cfgA.GiveUpAfter = 300 * time.Millisecond
	sysA, _ := startSystem(t, "alpha", cfgA)
	cfgB := testConfig(t)
	cfgB.SystemName = "beta"
	sysB, _ := startSystem(t, "beta", cfgB)
	echo, err := sysB.Root().SpawnNamed(echoProps("b"), "echo")
	require.NoError(t, err)
	ends := events[*remote.EndpointTerminated](t, sysA)

	f := sysA.Root().RequestFuture(remotePID(echo), &Echo{Text: "hello?"}, 10*time.Second)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	require.ErrorIs(t, ev.Reason, remote.ErrClusterMismatch, "the give-up names the refusal: %v", ev.Reason)

	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the request's error names the refusal: %v", err)
}
