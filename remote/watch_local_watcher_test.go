package remote_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestWatchRequestNamingALocalWatcherLeavesNoEntry: a peer's WatchRequest
// whose watcher names a process of the receiving node (by its address or
// actor.LocalAddress) must not leave an entry in the receiver's table of
// remote watchers once the watched actor has stopped. That table is for
// watchers on other nodes: an entry leaves it when the Terminated for it
// goes out through the remote process, or when the watcher's node is
// gone, and neither happens for a watcher on this node, so every such
// request grew the table for the node's life.
func TestWatchRequestNamingALocalWatcherLeavesNoEntry(t *testing.T) {
	sys, r := startSystem(t, "b", testConfig(t))
	x := echoOn(t, sys, "x", "b")

	peer, replies := barePeer(t)

	addr := r.Address()
	target := remote.PIDRef{Address: addr, ID: "x"}
	watchers := []remote.PIDRef{
		{Address: peer.Address(), ID: "remote-watcher"}, // an ordinary remote watch
		{Address: actor.LocalAddress, ID: "w0"},
	}
	for i := range 3 {
		watchers = append(watchers, remote.PIDRef{Address: addr, ID: fmt.Sprintf("w%d", i+1)})
	}
	for _, w := range watchers {
		require.NoError(t, peer.Send(addr, remote.Envelope{Target: target, Message: &remote.WatchRequest{Watcher: w, Watchee: target}}))
	}
	// The watches are in place once x answered a message sent after them
	// (system messages first, on one connection).
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: target, Sender: remote.PIDRef{Address: peer.Address(), ID: "s"}, Message: &Echo{Text: "sync"}}))
	select {
	case <-replies:
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the echo")
	}

	// A local watcher added last: its Terminated comes after x has sent
	// every other watcher's (and, for the remote one, removed its entry).
	probe := testkit.NewProbe(t, sys)
	probe.Watch(x)
	require.NoError(t, sys.Root().StopFuture(x).Wait())
	probe.ExpectTerminated(x, wait)
	_, in := r.WatchCounts()
	assert.Equal(t, 0, in, "remote watch entries left after the watched actor stopped")
}
