package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
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
	seen := make(chan remote.PIDRef, 1)
	cfg := remote.NodeTestConfig()
	cfg.Serializers = newSerializers(t, false)
	target, err := remote.NewNode(cfg, remote.Hooks{Deliver: func(_ remote.Peer, env remote.Envelope) {
		if _, ok := env.Message.(*Echo); ok {
			seen <- env.Sender
		}
	}})
	require.NoError(t, err)
	require.NoError(t, target.Start(context.Background()))
	t.Cleanup(func() { _ = target.Close(ctxWait(t)) })

	f := sysA.Root().RequestFuture(actor.NewPID(target.Address(), "x"), &Echo{Text: "req"}, time.Minute)
	var id remote.PIDRef
	select {
	case id = <-seen:
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the request")
	}
	f.Complete("done", nil)
	_, err = f.Result()
	require.NoError(t, err)

	p.watch("w", id.ID)
	p.expectNotices(remote.TerminatedNotFound, "w")
	p.unwatch("w", id.ID)
	p.sync("echo")
	require.Zero(t, ra.Node().Stats().FutureAnswersUnmatched,
		"a watch and an unwatch of a completed future counted as answers to no pending future")
}
