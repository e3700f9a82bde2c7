package remote_test

import (
	"context"
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

	undelivered := events[*actor.DeadLetterEvent](t, sysA)
	sysA.Root().Send(remotePID(echo), &Echo{Text: "hello?"})
	ev := waitFor(t, ends, "endpoint terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	require.ErrorIs(t, ev.Reason, remote.ErrClusterMismatch, "the give-up names the refusal: %v", ev.Reason)

	// The one-way message waited for the give-up, and its dead letter
	// names the refusal too.
	dl := waitFor(t, undelivered, "dead letter", func(d *actor.DeadLetterEvent) bool { _, ok := d.Message.(*Echo); return ok })
	require.ErrorIs(t, dl.Reason, remote.ErrPeerUnreachable)
	require.ErrorIs(t, dl.Reason, remote.ErrClusterMismatch, "the dead letter names the refusal: %v", dl.Reason)
}

// A request (and a remote spawn) to a node of another system fails at the
// first refused handshake, naming it, instead of waiting for its deadline
// and failing with a bare timeout (newuser9: a plain remote request to a
// node with another SystemName only timed out). The give-up is far off
// here: without the change the request waits out its context.
func TestRequestToAnotherSystemFailsAtTheRefusal(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.SystemName = "alpha"
	cfgA.GiveUpAfter = 10 * time.Minute
	sysA, ra := startSystem(t, "alpha", cfgA)
	cfgB := testConfig(t)
	cfgB.SystemName = "beta"
	sysB, _ := startSystem(t, "beta", cfgB)
	echo, err := sysB.Root().SpawnNamed(echoProps("b"), "echo")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = actor.Request[*Echo](ctx, sysA.Root(), remotePID(echo), &Echo{Text: "hello?"})
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the request's error names the refusal: %v", err)
	require.NotErrorIs(t, err, actor.ErrTimeout)

	_, err = ra.SpawnNamed(ctx, echo.Address, "echo-2", "echo")
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the spawn's error names the refusal: %v", err)
}
