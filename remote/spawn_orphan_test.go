package remote_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A remote spawn whose caller gave up (its ctx ended) before the answer
// came leaves no actor behind: when the answer comes, naming the actor
// the peer spawned, that actor is stopped, since nobody else knows its
// PID. An answer naming a process at another address than the answering
// peer's stops nothing. The peer is a bare Node that answers by hand.
func TestRemoteSpawnGivenUpStopsTheLateActor(t *testing.T) {
	requests := make(chan remote.Envelope, 4)
	stops := make(chan remote.PIDRef, 4)
	b, err := remote.NewNode(remote.NodeTestConfig(), remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			switch env.Message.(type) {
			case *remote.SpawnRequest:
				requests <- env
			case *remote.StopRequest:
				stops <- env.Target
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Close(ctxWait(t)) })
	take := func() remote.Envelope {
		t.Helper()
		select {
		case env := <-requests:
			return env
		case <-ctxWait(t).Done():
			t.Fatal("timed out waiting for a spawn request")
			return remote.Envelope{}
		}
	}
	answer := func(req remote.Envelope, pid remote.PIDRef) {
		t.Helper()
		m := req.Message.(*remote.SpawnRequest)
		require.NoError(t, b.Send(req.Sender.Address, remote.Envelope{Target: req.Sender,
			Message: &remote.SpawnResponse{RequestID: m.RequestID, PID: pid}}))
	}

	sysA, ra := startSystem(t, "a", testConfig(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ra.SpawnNamed(ctx, b.Address(), "late", "k")
		done <- err
	}()
	req := take()
	cancel()
	require.ErrorIs(t, <-done, actor.ErrTimeout)

	// An answer naming a process elsewhere (here one of a's own) stops
	// nothing; the one naming the peer's own actor stops it.
	own := echoOn(t, sysA, "own", "a")
	answer(req, remote.PIDRef{Address: ra.Address(), ID: own.ID})
	late := remote.PIDRef{Address: b.Address(), ID: "late"}
	answer(req, late)
	select {
	case got := <-stops:
		require.Equal(t, late, got)
	case <-ctxWait(t).Done():
		t.Fatal("the late actor was never stopped")
	}
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), own, &Echo{Text: "alive"})
	require.NoError(t, err)
	require.Equal(t, "alive", rep.Text)
}
