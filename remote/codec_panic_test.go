package remote

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicsOnDecode encodes fine and panics when decoded, as a buggy
// user-written UnmarshalJSON may.
type panicsOnDecode struct{ N int }

func (*panicsOnDecode) UnmarshalJSON([]byte) error { panic("decode bug") }

// panicsOnEncode panics when encoded, as a buggy MarshalJSON may.
type panicsOnEncode struct{ N int }

func (*panicsOnEncode) MarshalJSON() ([]byte, error) { panic(errors.New("encode bug")) }

// TestCodecPanicIsABadPayload: a codec that panics, on either side, costs
// that one envelope (Undelivered with ErrCodecPanic); the process, the
// connection and the envelopes after it are unharmed.
func TestCodecPanicIsABadPayload(t *testing.T) {
	mem := NewMemoryNetwork()
	ser := NewSerializers()
	require.NoError(t, RegisterJSON[*panicsOnDecode](ser, "test.PanicsOnDecode"))
	require.NoError(t, RegisterJSON[*panicsOnEncode](ser, "test.PanicsOnEncode"))
	cfg := testConfig()
	cfg.ListenAddress = "mem:0"
	cfg.Serializers = ser
	a, ra := startNode(t, cfg, WithTransport(mem))
	b, rb := startNode(t, cfg, WithTransport(mem))
	to := PIDRef{Address: b.Address(), ID: "sink"}

	require.NoError(t, a.Send(b.Address(), Envelope{Target: to, Message: &panicsOnDecode{N: 1}}))
	require.NoError(t, a.Send(b.Address(), Envelope{Target: to, Message: &panicsOnEncode{N: 2}}))
	require.NoError(t, a.Send(b.Address(), Envelope{Target: to, Message: ping(3)}))

	rb.waitUntil(t, "the ping after the bad payloads", func(r *recorder) bool { return len(r.delivered) == 1 })
	assert.Equal(t, ping(3), rb.delivered[0].Env.Message)

	rb.mu.Lock()
	require.Len(t, rb.undelivered, 1, "the receiver refuses the payload its codec panicked on")
	in := rb.undelivered[0]
	rb.mu.Unlock()
	assert.True(t, in.Inbound)
	assert.Equal(t, "test.PanicsOnDecode", in.TypeName)
	assert.ErrorIs(t, in.Err, ErrCodecPanic)
	assert.ErrorContains(t, in.Err, "decode bug")

	ra.waitUntil(t, "the sender's undelivered envelope", func(r *recorder) bool { return len(r.undelivered) == 1 })
	ra.mu.Lock()
	out := ra.undelivered[0]
	ra.mu.Unlock()
	assert.False(t, out.Inbound)
	assert.Equal(t, &panicsOnEncode{N: 2}, out.Envelope.Message)
	assert.ErrorIs(t, out.Err, ErrCodecPanic)
	assert.ErrorContains(t, out.Err, "encode bug")

	assert.Equal(t, int64(1), a.Stats().Connections, "the connection stays up")
	assert.Equal(t, int64(1), b.Stats().Connections)
	for _, e := range ra.snapshotEvents() {
		assert.NotEqual(t, EventDisconnected, e.Kind, "no disconnect: %v", e.Err)
	}
}

// TestSerializersRecoverCodecPanics: the public Serialize and Deserialize
// turn a codec panic into ErrCodecPanic.
func TestSerializersRecoverCodecPanics(t *testing.T) {
	ser := NewSerializers()
	require.NoError(t, RegisterJSON[*panicsOnDecode](ser, "test.PanicsOnDecode"))
	require.NoError(t, RegisterJSON[*panicsOnEncode](ser, "test.PanicsOnEncode"))
	_, _, _, err := ser.Serialize(nil, &panicsOnEncode{})
	require.ErrorIs(t, err, ErrCodecPanic)
	_, err = ser.Deserialize(SerializerJSON, "test.PanicsOnDecode", []byte(`{"N":1}`))
	require.ErrorIs(t, err, ErrCodecPanic)
}

// BenchmarkCodecRecover compares a protobuf round trip through the codec's
// functions as they are ("bare") and through encode/decode, which recover
// a panic: the difference is the cost of the recovery.
func BenchmarkCodecRecover(b *testing.B) {
	_, c, msg, _ := bytesCodec(b)
	buf := make([]byte, 0, 128)
	b.Run("bare", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := c.marshal(buf[:0], msg)
			_, _ = c.unmarshal(p)
		}
	})
	b.Run("recovered", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p, _ := c.encode(buf[:0], msg)
			_, _ = c.decode(p)
		}
	})
}
