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
	ra.waitUntil(t, "the large envelope reported undelivered", func(r *recorder) bool {
		for _, u := range r.undelivered {
			if u.Envelope.Message.(*Ping).Seq == 2 {
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
