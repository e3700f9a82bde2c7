package remote_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A graceful Shutdown of a node whose actor is watched from another node
// leaves no dead letter: the goodbye tells the peer (Terminated
// {AddressTerminated} for its watchers). Before, Shutdown closed remote
// first, then stopped the actors, and each watched actor's Terminated
// notice for the remote watcher became a dead letter
// (*remote.TerminatedNotice, "remote: stopped"), logged at Info on every
// clean shutdown.
func TestGracefulShutdownWithRemoteWatchersLeavesNoDeadLetter(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	target, err := sysA.Root().SpawnNamed(echoProps("a"), "watched")
	require.NoError(t, err)
	probe := testkit.NewProbe(t, sysB)
	remoteTarget := remotePID(target)
	probe.Watch(remoteTarget)
	// The watch is in place on A once a request sent after it is answered.
	_, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remoteTarget, &Echo{})
	require.NoError(t, err)

	before := sysA.DeadLetters()
	require.NoError(t, sysA.Shutdown(context.Background()))
	got := probe.ExpectTerminated(remoteTarget, wait)
	require.Equal(t, actor.TerminatedAddressTerminated, got.Why)
	require.Equal(t, before, sysA.DeadLetters(), "a clean shutdown made dead letters")
}

// The other side: a graceful Shutdown of a node whose actor watches one on
// another node leaves no dead letter either. The stopping watcher unwatches;
// remote has closed by then (Shutdown closes the extensions first), and its
// goodbye made the peer drop every watch of this node's actors, so the
// *remote.UnwatchRequest could not go out and was needed by nobody. Before,
// it became a dead letter ("remote: stopped") on every clean shutdown with a
// remote watch in place (found by a new user).
func TestGracefulShutdownOfARemoteWatcherLeavesNoDeadLetter(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	target, err := sysA.Root().SpawnNamed(echoProps("a"), "watched")
	require.NoError(t, err)
	remoteTarget := remotePID(target)
	probe := testkit.NewProbe(t, sysB)
	probe.Watch(remoteTarget)
	// The watch is in place on A once a request sent after it is answered.
	_, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remoteTarget, &Echo{})
	require.NoError(t, err)

	before := sysB.DeadLetters()
	require.NoError(t, sysB.Shutdown(context.Background()))
	require.Equal(t, before, sysB.DeadLetters(), "a clean shutdown made dead letters")
}
