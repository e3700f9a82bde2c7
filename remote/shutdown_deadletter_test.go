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
