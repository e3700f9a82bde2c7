package remote_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/remote"
)

// A spawn failed for its caller (here: its peer's endpoint ended) whose
// answer still arrives, before the caller woke up and forgot the request,
// has the actor it names stopped. Before, the answer found the request
// still registered, could not complete it (it already held the failure)
// and was dropped: the actor lived on and nobody knew its PID.
func TestRemoteSpawnAnswerAfterFailureStopsTheActor(t *testing.T) {
	stops := make(chan remote.PIDRef, 4)
	b, err := remote.NewNode(remote.NodeTestConfig(), remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			if _, ok := env.Message.(*remote.StopRequest); ok {
				stops <- env.Target
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Close(ctxWait(t)) })
	_, ra := startSystem(t, "a", testConfig(t))

	id := ra.AwaitSpawnForTest(b.Address())
	require.Equal(t, 1, ra.FailSpawnsToForTest(b.Address(), errors.New("endpoint ended")))
	late := remote.PIDRef{Address: b.Address(), ID: "late"}
	require.NoError(t, b.Send(ra.Address(), remote.Envelope{Target: remote.PIDRef{Address: ra.Address(), ID: remote.SpawnerID},
		Message: &remote.SpawnResponse{RequestID: id, PID: late}}))
	select {
	case got := <-stops:
		require.Equal(t, late, got)
	case <-ctxWait(t).Done():
		t.Fatal("the actor of the failed spawn was never stopped")
	}
}
