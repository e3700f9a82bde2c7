package remote_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// A node dies and a new incarnation starts at its address. The requests
// made while no connection was up were queued and go to the new
// incarnation, which answers them: they succeed. Only a request that may
// have reached the old incarnation (made before its connection closed)
// fails, with ErrPeerRestarted. Before, the restart failed every pending
// request to the address, these too, while the new incarnation handled
// them and its answers became dead letters: a caller that retried on the
// error did the work twice (found by a new user: 5 failed, 4 of them
// handled).
func TestRestartSparesRequestsMadeAfterTheLoss(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	b1, rb1 := startSystem(t, "b1", testConfig(t))
	addr := rb1.Address()
	echo := remotePID(echoOn(t, b1, "echo", "b1"))
	arrived := make(chan struct{}, 1)
	silent, err := b1.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Echo); ok {
			arrived <- struct{}{} // and never answers
		}
	}), "silent")
	require.NoError(t, err)
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "up"})
	require.NoError(t, err)
	unanswered := sysA.Root().RequestFuture(remotePID(silent), &Echo{Text: "taken by b1"}, wait)
	<-arrived

	evs := events[*remote.Event](t, sysA)
	crash(t, rb1)
	waitFor(t, evs, "a's connection to b1 closed", func(e *remote.Event) bool {
		return e.Kind == remote.EventDisconnected && e.Peer.Address == addr
	})
	require.NoError(t, b1.Shutdown(ctxWait(t)))
	var queued []*actor.Future
	for range 3 {
		queued = append(queued, sysA.Root().RequestFuture(echo, &Echo{Text: "queued"}, wait))
	}

	cfg := testConfig(t)
	cfg.ListenAddress = addr
	b2, _ := startSystem(t, "b2", cfg)
	echoOn(t, b2, "echo", "b2")

	start := time.Now()
	_, err = unanswered.Result()
	require.ErrorIs(t, err, remote.ErrPeerRestarted, "the request b1 took")
	assert.Less(t, time.Since(start), wait/2, "failed at the restart, not at its deadline")
	for i, f := range queued {
		res, err := f.Result()
		require.NoError(t, err, "request %d, made while no connection was up", i)
		assert.Equal(t, &EchoReply{Text: "queued", By: "b2"}, res)
	}
}
