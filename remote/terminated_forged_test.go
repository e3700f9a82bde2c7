package remote_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// A peer cannot tell a watcher here that a process on a third node ended:
// only that process's own node says so. Here a watches x on c, and a bare
// peer sends a's watcher a TerminatedNotice about x; the watcher's first
// Terminated is the real one, when x stops. Before, the forged notice
// reached the watcher.
func TestTerminatedNoticeAboutAnotherNodeRefused(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	sysC, _ := startSystem(t, "c", testConfig(t))
	x := echoOn(t, sysC, "x", "c")
	probe := newProbeWatching(t, sysA, remotePID(x))
	echoA := echoOn(t, sysA, "echo", "a")

	peer, replies := barePeer(t)

	addr := ra.Address()
	forged := &remote.TerminatedNotice{Who: remote.PIDRef{Address: x.Address, ID: x.ID}, Why: remote.TerminatedNotFound}
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: remote.PIDRef{Address: addr, ID: probe.PID().ID}, Message: forged}))
	// The notice was handled once a's echo answered a message sent after it.
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: remote.PIDRef{Address: addr, ID: echoA.ID},
		Sender: remote.PIDRef{Address: peer.Address(), ID: "s"}, Message: &Echo{Text: "sync"}}))
	select {
	case <-replies:
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the echo")
	}

	require.NoError(t, sysC.Root().StopFuture(x).Wait())
	term := testkit.ExpectMsg[*actor.Terminated](probe, wait)
	require.Equal(t, actor.TerminatedStopped, term.Why, "the first Terminated is x's own")
}

// A peer cannot watch a process here on behalf of a watcher on a third
// node: only the watcher's own node asks for it (the runtime's Watch always
// names a local watcher). Here a bare peer sends WatchRequests for x naming
// watchers at 20 made-up addresses, and one naming its own: only its own is
// kept. Before, each was kept, here and in x, until x stopped: the peer's
// departure ends the watches of its own address (TestRetiredWatcherGoneEndsItsWatches)
// and none elsewhere, so a peer could leave ever more entries behind, and
// x's end then had the node dial every named address.
func TestWatchRequestForAThirdNodesWatcherRefused(t *testing.T) {
	sysB, rb := startSystem(t, "b", testConfig(t))
	echoOn(t, sysB, "x", "b")
	peer, replies := barePeer(t)
	addr := rb.Address()
	x := remote.PIDRef{Address: addr, ID: "x"}
	for i := range 20 {
		w := remote.PIDRef{Address: fmt.Sprintf("third-%d.invalid:1", i), ID: "w"}
		require.NoError(t, peer.Send(addr, remote.Envelope{Target: x, Message: &remote.WatchRequest{Watcher: w, Watchee: x}}))
	}
	own := remote.PIDRef{Address: peer.Address(), ID: "w"}
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: x, Message: &remote.WatchRequest{Watcher: own, Watchee: x}}))
	// Handled once x answered a message sent after them.
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: x, Sender: remote.PIDRef{Address: peer.Address(), ID: "s"}, Message: &Echo{Text: "sync"}}))
	select {
	case <-replies:
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the echo")
	}
	_, in := rb.WatchCounts()
	require.Equal(t, 1, in, "remote watch entries: the peer's own watcher only")
}
