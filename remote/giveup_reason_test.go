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

	f := sysA.Root().RequestFuture(remotePID(echo), &Echo{Text: "hello?"}, 10*time.Second)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)
	require.ErrorIs(t, ev.Reason, remote.ErrClusterMismatch, "the give-up names the refusal: %v", ev.Reason)

	_, err = f.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the request's error names the refusal: %v", err)
}

// A request to a node whose handshake refuses this one (another
// SystemName) times out naming the refusal, by either form of the
// deadline (the request's timeout, the caller's context), instead of a
// bare "actor: timeout" (newuser9). It still waits for its deadline: the
// request stays queued for the give-up, and failing it earlier would tell
// its caller it was not delivered while a fixed peer could still get it
// (TestReview12RequestFailedAtRefusalIsNotDeliveredLater).
func TestRemoteRequestTimeoutNamesTheRefusedHandshake(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.SystemName = "alpha"
	sysA, _ := startSystem(t, "alpha", cfgA)
	cfgB := testConfig(t)
	cfgB.SystemName = "beta"
	sysB, _ := startSystem(t, "beta", cfgB)
	echo, err := sysB.Root().SpawnNamed(echoProps("b"), "echo")
	require.NoError(t, err)
	refused := events[*remote.Event](t, sysA)
	sysA.Root().Send(remotePID(echo), &Echo{Text: "dial"})
	waitFor(t, refused, "refused handshake", func(e *remote.Event) bool { return e.Kind == remote.EventHandshakeRefused && !e.Inbound })

	_, err = sysA.Root().RequestFuture(remotePID(echo), &Echo{Text: "hello?"}, 200*time.Millisecond).Result()
	require.ErrorIs(t, err, actor.ErrTimeout)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the timeout names the refusal: %v", err)

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = actor.Request[*Echo](ctx, sysA.Root(), remotePID(echo), &Echo{Text: "hello?"})
	require.ErrorIs(t, err, actor.ErrTimeout)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, remote.ErrClusterMismatch, "the timeout names the refusal: %v", err)
}
