package remote

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBlockListBothWays: blocking a node closes its connection, reports it
// terminated, refuses its handshakes and drops what we would send to it (as
// Undelivered, counted); unblocking lets it back in.
func TestBlockListBothWays(t *testing.T) {
	transports(t, func(t *testing.T, cfg func() Config, opts []Option) {
		a, ra := startNode(t, cfg(), opts...)
		b, rb := startNode(t, cfg(), opts...)
		send := func(from, to *Node, seq uint64) error {
			return from.Send(to.Address(), Envelope{Target: PIDRef{to.Address(), "x"}, Message: ping(seq)})
		}
		require.NoError(t, send(a, b, 1))
		rb.waitUntil(t, "first delivery", func(r *recorder) bool { return len(r.delivered) == 1 })

		a.BlockList().Block(b.NodeID())
		ra.waitUntil(t, "b terminated at a", func(r *recorder) bool { return len(r.terminated) == 1 })
		assert.ErrorIs(t, ra.terminated[0].Reason, ErrBlocked)
		rb.waitEvent(t, EventDisconnected, nil)

		// Outbound from a: dropped at once, counted.
		before := a.Stats().Undelivered
		assert.ErrorIs(t, send(a, b, 2), ErrBlocked)
		assert.Equal(t, before+1, a.Stats().Undelivered)

		// Inbound to a: b's reconnection is refused in the handshake, on
		// both sides, and nothing b sends arrives.
		require.NoError(t, send(b, a, 3))
		ra.waitUntil(t, "a refuses b", func(r *recorder) bool {
			for _, e := range r.events {
				if e.Kind == EventHandshakeRefused && e.Inbound && errors.Is(e.Err, ErrBlocked) {
					return true
				}
			}
			return false
		})
		rb.waitUntil(t, "b told it is blocked", func(r *recorder) bool {
			for _, e := range r.events {
				var rej *RejectError
				if e.Kind == EventHandshakeRefused && !e.Inbound && errors.As(e.Err, &rej) {
					return rej.Code == RejectBlocked
				}
			}
			return false
		})
		assert.Zero(t, ra.countDelivered())

		// Unblocked: b's queued envelope gets through on its next attempt.
		a.BlockList().Unblock(b.NodeID())
		ra.waitUntil(t, "delivery after unblock", func(r *recorder) bool { return len(r.delivered) == 1 })
		assert.Equal(t, ping(3), ra.delivered[0].Env.Message)

		// Blocking by address works the same, from the other side.
		b.BlockList().Block(a.Address())
		rb.waitUntil(t, "a terminated at b", func(r *recorder) bool { return len(r.terminated) >= 1 })
		assert.ErrorIs(t, send(b, a, 4), ErrBlocked)
		require.NoError(t, send(a, b, 5))
		rb.waitUntil(t, "b refuses a", func(r *recorder) bool {
			for _, e := range r.events {
				if e.Kind == EventHandshakeRefused && e.Inbound && errors.Is(e.Err, ErrBlocked) {
					return true
				}
			}
			return false
		})
		for _, d := range rb.delivered {
			assert.NotEqual(t, ping(5), d.Env.Message)
		}
	})
}
