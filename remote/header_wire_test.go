package remote

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

func decodeAll(t *testing.T, body []byte) ([]wireEnvelope, error) {
	t.Helper()
	var got []wireEnvelope
	err := newEnvelopeDecoder("b:1", "a:1").decodeBatch(body, func(w *wireEnvelope) error {
		c := *w
		c.payload = bytes.Clone(w.payload)
		c.nameSlot = 0
		got = append(got, c)
		return nil
	})
	return got, err
}

// Envelopes without a header are encoded byte for byte as before headers
// existed (so frames of older nodes decode unchanged), and a header round
// trips.
func TestEnvelopeHeaderWire(t *testing.T) {
	// The pre-header layout, written by hand: flags, target id, sender id,
	// serializer, type name (defined), payload.
	old := []byte{envHasSender}
	old = appendString(old, "t")
	old = appendString(old, "s")
	old = append(old, byte(SerializerProto))
	old = appendUvarint(old, nameDefine)
	old = appendString(old, "x.T")
	old = appendBytes(old, []byte{1, 2})

	w := wireEnvelope{target: PIDRef{"b:1", "t"}, sender: PIDRef{"a:1", "s"}, serializer: SerializerProto, typeName: "x.T", payload: []byte{1, 2}}
	require.Equal(t, old, newEnvelopeEncoder("a:1", "b:1").append(nil, &w))
	got, err := decodeAll(t, old)
	require.NoError(t, err)
	require.Nil(t, got[0].header)

	w.header = actor.Header{"traceparent": "00-abc-def-01", "": "empty key"}
	got, err = decodeAll(t, newEnvelopeEncoder("a:1", "b:1").append(nil, &w))
	require.NoError(t, err)
	require.Equal(t, w.header, got[0].header)
	require.Equal(t, w.payload, got[0].payload)
}

// Headers beyond the limits are refused on both sides with ErrMalformed.
func TestEnvelopeHeaderLimits(t *testing.T) {
	many := actor.Header{}
	for i := range maxHeaderFields + 1 {
		many[strings.Repeat("k", i+1)] = "v"
	}
	long := actor.Header{"k": strings.Repeat("v", maxHeaderBytes)}
	for name, h := range map[string]actor.Header{"fields": many, "bytes": long} {
		t.Run(name, func(t *testing.T) {
			w := wireEnvelope{target: PIDRef{"b:1", "t"}, typeName: "x.T", header: h}
			require.ErrorIs(t, w.check(), ErrMalformed)
			_, err := decodeAll(t, newEnvelopeEncoder("a:1", "b:1").append(nil, &w))
			require.True(t, errors.Is(err, ErrMalformed), "decode: %v", err)
		})
	}
}
