package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// nestedValue is a structpb.Value with messages three levels deep and a map.
func nestedValue(t testing.TB) *structpb.Value {
	v, err := structpb.NewValue(map[string]any{
		"list": []any{"a", 1.0, map[string]any{"deep": []any{true, "x"}}},
		"name": "order",
	})
	require.NoError(t, err)
	return v
}

// The sized marshal, after the estimate's proto.Size, writes what
// proto.Marshal writes, flat and nested.
func TestProtoMarshalSizedMatchesMarshal(t *testing.T) {
	for name, m := range map[string]proto.Message{
		"flat":   wrapperspb.Bytes([]byte("payload")),
		"empty":  &wrapperspb.StringValue{},
		"nested": nestedValue(t),
	} {
		t.Run(name, func(t *testing.T) {
			proto.Size(m)
			got, err := protoMarshalSized([]byte("prefix"), m)
			require.NoError(t, err)
			assert.Equal(t, "prefix", string(got[:6]), "appends to dst")
			back := m.ProtoReflect().Type().New().Interface()
			require.NoError(t, proto.Unmarshal(got[6:], back))
			assert.True(t, proto.Equal(m, back))
			want, err := proto.Marshal(m)
			require.NoError(t, err)
			assert.Len(t, got[6:], len(want))
		})
	}
}

// A typed nil message (a valid thing to send: it encodes as empty) takes
// the same path and writes what proto.Marshal writes.
func TestProtoMarshalSizedNilMessage(t *testing.T) {
	var m *wrapperspb.BytesValue
	proto.Size(m)
	got, err := protoMarshalSized([]byte("x"), m)
	require.NoError(t, err)
	want, err := proto.MarshalOptions{}.MarshalAppend([]byte("x"), m)
	require.NoError(t, err)
	assert.Equal(t, want, got)
}

// A nested message changed after its size was cached (a data race in the
// sender's code) fails the marshal: the cached size is checked against the
// bytes written, so no envelope with wrong lengths is framed.
func TestProtoMarshalSizedChangedAfterSizeFails(t *testing.T) {
	v := nestedValue(t)
	proto.Size(v)
	v.GetStructValue().Fields["name"] = structpb.NewStringValue("a much longer name than before")
	_, err := protoMarshalSized(nil, v)
	require.Error(t, err)

	proto.Size(v) // sized again: fine
	_, err = protoMarshalSized(nil, v)
	require.NoError(t, err)
}

// Required fields (proto2) are checked on both sides, as proto.Marshal and
// proto.Unmarshal check them.
func TestProtoCodecChecksRequiredFields(t *testing.T) {
	missing := &descriptorpb.UninterpretedOption_NamePart{NamePart: proto.String("x")} // is_extension unset
	proto.Size(missing)
	_, err := protoMarshalSized(nil, missing)
	require.Error(t, err)

	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(missing)
	require.NoError(t, err)
	require.Error(t, protoUnmarshal(b, &descriptorpb.UninterpretedOption_NamePart{}))

	full := &descriptorpb.UninterpretedOption_NamePart{NamePart: proto.String("x"), IsExtension: proto.Bool(true)}
	b, err = proto.Marshal(full)
	require.NoError(t, err)
	got := &descriptorpb.UninterpretedOption_NamePart{}
	require.NoError(t, protoUnmarshal(b, got))
	assert.True(t, proto.Equal(full, got))
}

// deepList encodes a structpb.Value nested depth times (a list holding a
// value holding a list ...), as a hostile peer may send.
func deepList(depth int) []byte {
	var b []byte // the innermost Value: empty
	for range depth {
		list := protowire.AppendTag(nil, 1, protowire.BytesType) // ListValue.values
		list = protowire.AppendBytes(list, b)
		b = protowire.AppendTag(nil, 6, protowire.BytesType) // Value.list_value
		b = protowire.AppendBytes(b, list)
	}
	return b
}

// Decoding keeps protobuf's recursion limit: a message nested deeper is
// refused with an error, while ordinary nesting decodes.
func TestProtoUnmarshalRecursionLimit(t *testing.T) {
	require.NoError(t, protoUnmarshal(deepList(10), &structpb.Value{}))
	require.Error(t, protoUnmarshal(deepList(protowire.DefaultRecursionLimit), &structpb.Value{}))

	s := NewSerializers()
	require.NoError(t, s.RegisterProto(&structpb.Value{}))
	_, err := s.Deserialize(SerializerProto, "google.protobuf.Value", deepList(protowire.DefaultRecursionLimit))
	require.ErrorIs(t, err, ErrMalformed)
}

// BenchmarkProtoCodecPath is the codec's share of one remote message: the
// sender's estimate with the writer's encoding (queued: the sized marshal;
// plain: proto.Marshal's path, as before), and the receiver's decoding.
//
//	go test -run '^$' -bench ProtoCodecPath ./remote/
func BenchmarkProtoCodecPath(b *testing.B) {
	_, c, msg, payload := bytesCodec(b)
	buf := make([]byte, 0, 128)
	b.Run("send=queued", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.estimate(msg)
			buf, _ = c.encodeQueued(buf[:0], msg)
		}
	})
	b.Run("send=plain", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			c.estimate(msg)
			buf, _ = c.encode(buf[:0], msg)
		}
	})
	b.Run("receive", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = c.decode(payload)
		}
	})
}

// FuzzProtoDecode: any payload a peer sends for a registered protobuf type
// either decodes or is refused with ErrMalformed, never a panic; what
// decodes encodes again (sized as the outbound path sizes it) to a message
// equal to it.
//
//	go test -run '^$' -fuzz FuzzProtoDecode -fuzztime 30s ./remote/
func FuzzProtoDecode(f *testing.F) {
	s := NewSerializers()
	require.NoError(f, s.RegisterProto(&structpb.Value{}))
	good, err := proto.Marshal(nestedValue(f))
	require.NoError(f, err)
	f.Add(good)
	f.Add(deepList(20))
	f.Add([]byte{0x32, 0x02, 0x0a})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := s.Deserialize(SerializerProto, "google.protobuf.Value", b)
		if err != nil {
			require.ErrorIs(t, err, ErrMalformed)
			return
		}
		m := v.(proto.Message)
		proto.Size(m)
		out, err := protoMarshalSized(nil, m)
		require.NoError(t, err)
		back := &structpb.Value{}
		require.NoError(t, proto.Unmarshal(out, back))
		require.True(t, proto.Equal(m, back))
	})
}
