package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/remote"
)

// Stats.FutureAnswersUnmatched counts answers (a reply, a Terminated, a
// DeadLetterResponse) to a future that is no longer pending, and its log
// line says "an answer ... (late, or a made-up future ID) dropped". A
// WatchRequest or UnwatchRequest for a future that completed is no answer:
// the node the request went to may watch its requester (as
// TestFutureWatchUnwatchFromPeerBounded does) and do so after the request
// completed; the Watch is answered with Terminated{NotFound}, nothing is
// dropped. targetNotFound counts and logs every envelope to a missing
// future ID, whatever its type, so each such watch, unwatch (and
// StopRequest) is counted and logged as a late or forged answer.
func TestReview7WatchOfCompletedFutureIsNoUnmatchedAnswer(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	p := newWatchPeer(t, ra.Address())
	f, id := requestToBareNode(t, sysA)
	f.Complete("done", nil)
	_, err := f.Result()
	require.NoError(t, err)

	p.watch("w", id.ID)
	p.expectNotices(remote.TerminatedNotFound, "w")
	p.unwatch("w", id.ID)
	p.sync("echo")
	require.Zero(t, ra.Node().Stats().FutureAnswersUnmatched,
		"a watch and an unwatch of a completed future counted as answers to no pending future")
}
