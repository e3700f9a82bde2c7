package remote

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPeerIDsBounded: a party that completes handshakes claiming ever new
// addresses (possible under plain TCP or one-way TLS, see "Trust model" in
// docs/remote.md) cannot grow the Node's table of known peers for ever. At
// its cap the table forgets the addresses that have no endpoint, except
// those whose node ID is blocked: Send to such an address still fails at
// once with ErrBlocked.
func TestPeerIDsBounded(t *testing.T) {
	mem := NewMemoryNetwork()
	cfg := testConfig()
	cfg.ListenAddress = "node-b:1"
	b, rb := startNode(t, cfg, WithTransport(mem))
	claim := func(i int) {
		raw, err := mem.Dial(context.Background(), b.Address())
		require.NoError(t, err)
		r := &rawClient{t: t, c: raw, fr: newFrameReader(raw, MaxFrameSize)}
		r.handshake(cfg.SystemName, fmt.Sprintf("claimer-%d", i), fmt.Sprintf("claim-%d:1", i))
		require.NoError(t, raw.Close())
	}
	const claims = 50
	for i := range claims {
		claim(i)
	}
	// Each claim's endpoint is retired when its connection ends (nothing
	// was sent to it: retireUnused).
	rb.waitUntil(t, "every claim's connection gone", func(r *recorder) bool { return countKind(r.events, EventDisconnected) == claims })
	require.Eventually(t, func() bool { return b.Stats().Endpoints == 0 }, waitTimeout, time.Millisecond)
	known := func() int {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.peerIDs)
	}
	require.Equal(t, claims, known(), "below the cap every address is remembered")

	b.BlockList().Block("claimer-0") // by node ID: only the table links it to claim-0:1
	b.mu.Lock()
	b.peersCap = 10
	b.mu.Unlock()
	claim(claims)
	rb.waitUntil(t, "the last claim's connection gone", func(r *recorder) bool { return countKind(r.events, EventDisconnected) == claims+1 })
	require.Eventually(t, func() bool { return b.Stats().Endpoints == 0 }, waitTimeout, time.Millisecond)
	require.Empty(t, rb.terminated, "a claimant that left is not reported terminated")
	b.mu.Lock()
	_, blockedKept := b.peerIDs["claim-0:1"]
	_, newKept := b.peerIDs[fmt.Sprintf("claim-%d:1", claims)]
	b.mu.Unlock()
	require.True(t, blockedKept, "a blocked node's address is not forgotten")
	require.True(t, newKept)
	require.Equal(t, 2, known(), "idle, unblocked addresses forgotten at the cap")

	err := b.Send("claim-0:1", Envelope{Target: PIDRef{"claim-0:1", "x"}, Message: ping(1)})
	require.True(t, errors.Is(err, ErrBlocked), "Send to the blocked node's address fails at once: %v", err)
}

// countKind counts the events of kind.
func countKind(events []Event, kind EventKind) int {
	k := 0
	for _, e := range events {
		if e.Kind == kind {
			k++
		}
	}
	return k
}
