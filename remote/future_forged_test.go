package remote_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// futureDigits is the digit set of a future ID's sequence and tag
// (actor/future_id.go).
const futureDigits = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_"

// neighbourID is the future ID an attacker derives from one it saw: the
// sequence k further, the rest kept. When future IDs were a bare sequence
// ("future$<seq>") this named the futures made after the one seen; it does
// so again whenever the tag does not change from one future to the next.
func neighbourID(t *testing.T, id string, k uint64) string {
	t.Helper()
	const prefix, tagLen = "future$", 11
	require.True(t, strings.HasPrefix(id, prefix) && len(id) > len(prefix)+tagLen, "future ID %q", id)
	var seq uint64
	for _, ch := range []byte(id[len(prefix) : len(id)-tagLen]) {
		d := strings.IndexByte(futureDigits, ch)
		require.GreaterOrEqual(t, d, 0, "future ID %q", id)
		seq = seq<<6 | uint64(d)
	}
	seq += k
	var digits []byte
	for ; seq > 0; seq >>= 6 {
		digits = append([]byte{futureDigits[seq&63]}, digits...)
	}
	return prefix + string(digits) + id[len(id)-tagLen:]
}

// A connected peer that saw one future's ID (as the sender of a request
// sent to it) cannot complete other pending futures of that node: it names
// the IDs that follow the one it saw, sends each a reply, a Terminated,
// and a request to an echo actor there whose answer would go to the
// future; none of the pending futures completes, each answer is a dead
// letter (ErrNoSuchFuture) counted in Stats.FutureAnswersUnmatched, and
// the future the peer was sent still takes its answer. Before, future IDs
// were a sequence and every pending future took the first forged answer.
func TestForgedAnswerToFutureRefused(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	silent := sysA.Root().Spawn(actor.PropsFromFunc(func(actor.Context) {}))
	dead := events[*actor.DeadLetterEvent](t, sysA)

	seen := make(chan remote.PIDRef, 1)
	replies := make(chan *EchoReply, 1)
	cfg := remote.NodeTestConfig()
	cfg.Serializers = newSerializers(t, false)
	peer, err := remote.NewNode(cfg, remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			switch m := env.Message.(type) {
			case *Echo:
				if m.Text == "to the peer" {
					seen <- env.Sender
				}
			case *EchoReply:
				replies <- m
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, peer.Start(context.Background()))
	t.Cleanup(func() { _ = peer.Close(ctxWait(t)) })

	// A request to the peer: the peer learns its future's ID.
	first := sysA.Root().RequestFuture(actor.NewPID(peer.Address(), "target"), &Echo{Text: "to the peer"}, time.Minute)
	var sender remote.PIDRef
	select {
	case sender = <-seen:
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the request")
	}
	require.True(t, actor.IsFutureID(sender.ID))
	// Requests the peer never sees, pending until the end of the test.
	var pending []*actor.Future
	for range 5 {
		pending = append(pending, sysA.Root().RequestFuture(silent, &Echo{Text: "local"}, time.Minute))
	}

	addr := ra.Address()
	const names = 20
	for k := uint64(1); k <= names; k++ {
		forged := remote.PIDRef{Address: addr, ID: neighbourID(t, sender.ID, k)}
		require.NoError(t, peer.Send(addr, remote.Envelope{Target: forged, Message: &EchoReply{Text: "forged", By: "peer"}}))
		require.NoError(t, peer.Send(addr, remote.Envelope{Target: forged,
			Message: &remote.TerminatedNotice{Who: remote.PIDRef{Address: peer.Address(), ID: "x"}}}))
		require.NoError(t, peer.Send(addr, remote.Envelope{Target: remote.PIDRef{Address: addr, ID: "echo"}, Sender: forged,
			Message: &Echo{Text: "forged"}}))
	}
	// Handled once the echo answered a message sent after them.
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: remote.PIDRef{Address: addr, ID: "echo"},
		Sender: remote.PIDRef{Address: peer.Address(), ID: "s"}, Message: &Echo{Text: "sync"}}))
	select {
	case r := <-replies:
		require.Equal(t, "sync", r.Text)
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the echo")
	}

	for i, f := range pending {
		select {
		case <-f.Done():
			v, err := f.Result()
			t.Fatalf("pending future %d (%s) completed by the peer: %v, %v", i, f.PID().ID, v, err)
		default:
		}
	}
	require.GreaterOrEqual(t, ra.Node().Stats().FutureAnswersUnmatched, uint64(2*names),
		"the forged replies and Terminated notices are counted")
	waitFor(t, dead, "a dead letter with ErrNoSuchFuture", deadLetterWith(remote.ErrNoSuchFuture))

	// The future the peer was sent takes the peer's answer.
	require.NoError(t, peer.Send(addr, remote.Envelope{Target: sender, Message: &EchoReply{Text: "answer", By: "peer"}}))
	v, err := first.Result()
	require.NoError(t, err)
	require.Equal(t, "answer", v.(*EchoReply).Text)
}

// The node a request went to knows its future's ID and may watch it (an
// actor that watches its requester), but not make the node hold a relay
// per WatchRequest: 1 000 WatchRequest/UnwatchRequest pairs and one more
// WatchRequest for the same watcher leave one watch, and the future's
// completion sends one Terminated. Before, each WatchRequest added a relay
// to the future, kept until it completed (Unwatch was ignored), and the
// completion sent 1 001.
func TestFutureWatchUnwatchFromPeerBounded(t *testing.T) {
	sysA, ra := startSystem(t, "a", testConfig(t))
	echoOn(t, sysA, "echo", "a")
	p := newWatchPeer(t, ra.Address())
	// The request goes to a bare node that reports the future's ID, its
	// sender; the watch peer, at another address, watches it (a watcher
	// at the peer's own address, as the rules ask).
	f, id := requestToBareNode(t, sysA)
	for range 1000 {
		p.watch("w", id.ID)
		p.unwatch("w", id.ID)
	}
	p.watch("w", id.ID)
	p.sync("echo")
	_, in := ra.WatchCounts()
	require.Equal(t, 1, in)

	f.Complete("done", nil)
	p.expectNotices(remote.TerminatedStopped, "w")
	p.sync("echo")
	select {
	case n := <-p.notices:
		t.Fatalf("a second notice for %s (and %d more queued)", n.Who.ID, len(p.notices))
	default:
	}
}

// requestToBareNode makes a request from sys to a bare Node that answers
// nothing and returns the request's future and its ID as the bare node
// saw it (the request's sender).
func requestToBareNode(t *testing.T, sys *actor.System) (*actor.Future, remote.PIDRef) {
	t.Helper()
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

	f := sys.Root().RequestFuture(actor.NewPID(target.Address(), "x"), &Echo{Text: "req"}, time.Minute)
	select {
	case id := <-seen:
		return f, id
	case <-ctxWait(t).Done():
		t.Fatal("timed out waiting for the request")
		return nil, remote.PIDRef{}
	}
}
