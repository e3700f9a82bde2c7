package remote

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// Nodes with different MaxFrameSize: an envelope larger than the peer's
// limit, though within the sender's, is refused where it is sent
// (ErrFrameTooLarge, Undelivered) and the connection stays up. Before, the
// sender wrote it, the peer's reader refused the frame header and closed
// the connection, and the envelope was lost with a connection error.
func TestEnvelopeLargerThanPeerFrameLimitRefusedAtSender(t *testing.T) {
	cfgA := testConfig()
	cfgB := testConfig()
	cfgB.MaxFrameSize = MinFrameSize
	a, ra := startNode(t, cfgA)
	b, rb := startNode(t, cfgB)
	target := PIDRef{Address: b.Address(), ID: "x"}
	require.NoError(t, a.Send(b.Address(), Envelope{Target: target, Message: ping(1)}))
	rb.waitUntil(t, "the first envelope", func(r *recorder) bool { return len(r.delivered) == 1 })

	big := Envelope{Target: target, Header: actor.Header{"pad": strings.Repeat("y", 8000)}, Message: ping(2)}
	_ = a.Send(b.Address(), big)
	refusedThenNext(t, a, b, ra, rb, target, func(m any) bool { p, ok := m.(*Ping); return ok && p.Seq == 2 })
}

// refusedThenNext waits until a reports the envelope whose message is
// refused by big as undelivered with ErrFrameTooLarge, then sends ping 3
// and checks that b receives it as its second envelope, on the same
// connection, with no protocol error on b's side.
func refusedThenNext(t *testing.T, a, b *Node, ra, rb *recorder, target PIDRef, big func(any) bool) {
	t.Helper()
	ra.waitUntil(t, "the large envelope reported undelivered at the sender", func(r *recorder) bool {
		for _, u := range r.undelivered {
			if big(u.Envelope.Message) {
				assert.ErrorIs(t, u.Err, ErrFrameTooLarge)
				return true
			}
		}
		return false
	})
	require.NoError(t, a.Send(b.Address(), Envelope{Target: target, Message: ping(3)}))
	rb.waitUntil(t, "the envelope after it", func(r *recorder) bool { return len(r.delivered) == 2 })
	assert.EqualValues(t, 1, a.Stats().Connections, "the same connection carried both")
	assert.Zero(t, b.Stats().ProtocolErrors)
}
