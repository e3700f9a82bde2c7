package remote

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

type jsonOrder struct {
	ID    string `json:"id"`
	Count int    `json:"count"`
}

type jsonValue struct{ N int }

func TestSerializersRoundTrip(t *testing.T) {
	s := NewSerializers()
	require.NoError(t, s.RegisterProto((*wrapperspb.StringValue)(nil), &structpb.Struct{}))
	require.NoError(t, RegisterJSON[*jsonOrder](s, "shop.Order"))
	require.NoError(t, RegisterJSON[jsonValue](s, "shop.Value"))

	st, err := structpb.NewStruct(map[string]any{"k": "v", "n": 2.0})
	require.NoError(t, err)
	tests := []struct {
		name   string
		msg    any
		ser    SerializerID
		tname  string
		equals func(t *testing.T, got any)
	}{
		{"proto", wrapperspb.String("hi"), SerializerProto, "google.protobuf.StringValue", func(t *testing.T, got any) {
			assert.True(t, proto.Equal(wrapperspb.String("hi"), got.(proto.Message)))
		}},
		{"proto struct", st, SerializerProto, "google.protobuf.Struct", func(t *testing.T, got any) {
			assert.True(t, proto.Equal(st, got.(proto.Message)))
		}},
		{"json pointer", &jsonOrder{ID: "o1", Count: 3}, SerializerJSON, "shop.Order", func(t *testing.T, got any) {
			assert.Equal(t, &jsonOrder{ID: "o1", Count: 3}, got)
		}},
		{"json value", jsonValue{N: 7}, SerializerJSON, "shop.Value", func(t *testing.T, got any) {
			assert.Equal(t, jsonValue{N: 7}, got)
		}},
		{"system", &WatchRequest{Watcher: PIDRef{"a", "1"}, Watchee: PIDRef{"b", "2"}}, SerializerSystem, "", func(t *testing.T, got any) {
			assert.Equal(t, &WatchRequest{Watcher: PIDRef{"a", "1"}, Watchee: PIDRef{"b", "2"}}, got)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ser, name, payload, err := s.Serialize(nil, tt.msg)
			require.NoError(t, err)
			assert.Equal(t, tt.ser, ser)
			assert.Equal(t, tt.tname, name)
			got, err := s.Deserialize(ser, name, payload)
			require.NoError(t, err)
			tt.equals(t, got)
		})
	}
}

func TestSerializersRefuseUnregistered(t *testing.T) {
	s := NewSerializers()
	require.NoError(t, RegisterJSON[*jsonOrder](s, "shop.Order"))
	// Not registered on this registry, though linked into the binary and
	// present in the global protobuf registry: refused both ways.
	_, _, _, err := s.Serialize(nil, wrapperspb.String("x"))
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerProto, "google.protobuf.StringValue", nil)
	assert.ErrorIs(t, err, ErrUnknownType)
	_, _, _, err = s.Serialize(nil, jsonOrder{}) // value, but *jsonOrder is registered
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerJSON, "shop.Other", []byte("{}"))
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerProto, "shop.Order", []byte("{}")) // right name, wrong serializer
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerID(77), "shop.Order", nil)
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerSystem, "shop.Order", []byte{sysPing, 1})
	assert.ErrorIs(t, err, ErrUnknownType)
	_, err = s.Deserialize(SerializerJSON, "shop.Order", []byte("{not json"))
	assert.ErrorIs(t, err, ErrMalformed)
}

func TestSerializersRegistrationErrors(t *testing.T) {
	s := NewSerializers()
	require.NoError(t, RegisterJSON[*jsonOrder](s, "shop.Order"))
	assert.ErrorIs(t, RegisterJSON[*jsonOrder](s, "shop.Order2"), ErrAlreadyRegistered)
	assert.ErrorIs(t, RegisterJSON[jsonValue](s, "shop.Order"), ErrAlreadyRegistered)
	assert.ErrorIs(t, RegisterJSON[jsonValue](s, ""), ErrInvalidConfig)
	assert.ErrorIs(t, RegisterJSON[any](s, "any"), ErrInvalidConfig)
	assert.ErrorIs(t, s.RegisterProto(nil), ErrInvalidConfig)
	require.NoError(t, s.RegisterProto(&wrapperspb.Int64Value{}))
	assert.ErrorIs(t, s.RegisterProto(&wrapperspb.Int64Value{}), ErrAlreadyRegistered)
}

func BenchmarkSerializeProto(b *testing.B) {
	s := NewSerializers()
	require.NoError(b, s.RegisterProto(&wrapperspb.StringValue{}))
	m := wrapperspb.String("hello")
	b.ReportAllocs()
	for b.Loop() {
		_, _, _, _ = s.Serialize(nil, m)
	}
}

// A dynamicpb message (a type known only by its descriptor) decodes into a
// dynamic message of that descriptor: its zero value has none, so it is not
// made the way generated messages are.
func TestSerializersDynamicProto(t *testing.T) {
	s := NewSerializers()
	desc := (&wrapperspb.StringValue{}).ProtoReflect().Descriptor()
	dyn := dynamicpb.NewMessage(desc)
	dyn.Set(desc.Fields().ByName("value"), protoreflect.ValueOfString("dynamic"))
	require.NoError(t, s.RegisterProto(dyn))
	ser, name, payload, err := s.Serialize(nil, dyn)
	require.NoError(t, err)
	require.Equal(t, "google.protobuf.StringValue", name)
	got, err := s.Deserialize(ser, name, payload)
	require.NoError(t, err)
	require.IsType(t, &dynamicpb.Message{}, got)
	assert.True(t, proto.Equal(dyn, got.(proto.Message)))
}
