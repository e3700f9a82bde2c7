package remote_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/remote"
)

// TestSpawnAnswerToEarlierIncarnationRefused: a node that asked a peer for
// a remote spawn and died before the answer came, then came back at the
// same address, must not take that late answer for the answer to its own
// first spawn request. The peer here is a bare Node that answers by hand:
// its answer to the dead incarnation waits in its queue for the address
// and goes out on the connection to the new one, ahead of the answer to the
// new request.
func TestSpawnAnswerToEarlierIncarnationRefused(t *testing.T) {
	type request struct {
		env remote.Envelope
		req *remote.SpawnRequest
	}
	requests := make(chan request, 4)
	events := make(chan remote.Event, 256)
	// The peer redials a lost address once at once, then not for minutes:
	// the new incarnation is the one to connect, after its request is out.
	cfgB := remote.NodeTestConfig()
	cfgB.ReconnectBackoffMin, cfgB.ReconnectBackoffMax, cfgB.GiveUpAfter = 10*time.Minute, 10*time.Minute, time.Hour
	b, err := remote.NewNode(cfgB, remote.Hooks{
		Deliver: func(_ remote.Peer, env remote.Envelope) {
			if m, ok := env.Message.(*remote.SpawnRequest); ok {
				requests <- request{env, m}
			}
		},
		Event: func(e remote.Event) {
			select {
			case events <- e:
			default:
			}
		},
	})
	require.NoError(t, err)
	require.NoError(t, b.Start(context.Background()))
	t.Cleanup(func() { _ = b.Close(ctxWait(t)) })
	answer := func(r request, name string) {
		require.NoError(t, b.Send(r.env.Sender.Address, remote.Envelope{
			Target:  r.env.Sender,
			Message: &remote.SpawnResponse{RequestID: r.req.RequestID, PID: remote.PIDRef{Address: b.Address(), ID: name}},
		}))
	}
	take := func() request {
		select {
		case r := <-requests:
			return r
		case <-ctxWait(t).Done():
			t.Fatal("timed out waiting for a spawn request")
			return request{}
		}
	}

	sys1, r1 := startSystem(t, "a1", testConfig(t))
	go func() { _, _ = r1.SpawnNamed(context.Background(), b.Address(), "first", "k") }()
	first := take()
	require.Equal(t, "first", first.req.Name)

	// The node dies before the answer; the peer notices. It had sent
	// nothing to the node, so it does not redial (its endpoint is retired);
	// its answer makes a new endpoint, whose dial fails, and waits in its
	// queue for the address.
	addr := r1.Address()
	crash(t, r1)
	require.NoError(t, sys1.Shutdown(ctxWait(t)))
	waitFor(t, events, "the peer seeing the connection end", func(e remote.Event) bool {
		return e.Kind == remote.EventDisconnected && e.Inbound
	})
	answer(first, "first")
	// (A dial that reached the dying node's listener before it closed
	// fails in the handshake instead.)
	waitFor(t, events, "the peer's dial failing", func(e remote.Event) bool {
		return e.Kind == remote.EventDialFailed || e.Kind == remote.EventHandshakeRefused && !e.Inbound
	})

	// The node comes back at the same address and asks for a spawn.
	cfg := testConfig(t)
	cfg.ListenAddress = addr
	_, r2 := startSystem(t, "a2", cfg)
	require.Equal(t, addr, r2.Address())
	type result struct {
		name string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		pid, err := r2.SpawnNamed(ctxWait(t), b.Address(), "second", "k")
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{name: pid.ID}
	}()
	second := take()
	require.Equal(t, "second", second.req.Name)
	answer(second, "second")
	res := <-done
	require.NoError(t, res.err)
	assert.Equal(t, "second", res.name, "the new incarnation's spawn took the answer meant for the earlier one")
	assert.False(t, errors.Is(res.err, remote.ErrSpawnFailed))
}
