package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// TestRequestToDeadNodeFailsAtTermination: a request whose message reached
// a node that then dies (no goodbye, no answer) fails when that node's
// endpoint is declared terminated (GiveUpAfter after the crash), not at the
// request's own deadline, with an error that is both actor.ErrDeadLetter
// and the endpoint's reason. The time from the crash to the failure is
// logged (go test -v).
func TestRequestToDeadNodeFailsAtTermination(t *testing.T) {
	const giveUp, deadline = 300 * time.Millisecond, 10 * time.Second
	cfg := testConfig(t)
	cfg.GiveUpAfter = giveUp
	sysA, _ := startSystem(t, "a", cfg)
	sysB, rb := startSystem(t, "b", testConfig(t))
	got := make(chan struct{}, 1)
	silent, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Echo); ok {
			got <- struct{}{} // received; never answers
		}
	}), "silent")
	require.NoError(t, err)
	ends := events[*remote.EndpointTerminated](t, sysA)

	f := sysA.Root().RequestFuture(remotePID(silent), &Echo{Text: "hello?"}, deadline)
	select {
	case <-got:
	case <-time.After(wait):
		t.Fatal("the request never arrived")
	}
	crashed := time.Now()
	crash(t, rb)
	ev := waitFor(t, ends, "endpoint terminated", nil)
	require.ErrorIs(t, ev.Reason, remote.ErrPeerUnreachable)

	_, err = f.Result() // bounded by the request's deadline
	elapsed := time.Since(crashed)
	t.Logf("request to a dead node failed %v after the crash (GiveUpAfter %v, request deadline %v): %v", elapsed.Round(time.Millisecond), giveUp, deadline, err)
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	assert.ErrorIs(t, err, remote.ErrPeerUnreachable)
	assert.NotErrorIs(t, err, actor.ErrTimeout)
}
