package remote

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"sync"
	"sync/atomic"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/dynamicpb"
)

// SerializerID says how a payload is encoded; it travels in every envelope.
type SerializerID uint8

// Serializer IDs, stable on the wire.
const (
	SerializerSystem SerializerID = 1 // the compact encoding of SystemMessage types
	SerializerProto  SerializerID = 2 // protobuf, type name = the message's full name
	SerializerJSON   SerializerID = 3 // encoding/json, type name = the registered name
)

func (s SerializerID) String() string {
	switch s {
	case SerializerSystem:
		return "system"
	case SerializerProto:
		return "proto"
	case SerializerJSON:
		return "json"
	}
	return fmt.Sprintf("serializer(%d)", uint8(s))
}

// Serializers is the registry of message types that may cross the network.
//
// Protobuf messages are registered explicitly (RegisterProto) and looked up
// by full name in this registry only, never in the global protobuf registry:
// a peer can therefore only make this node instantiate types that the
// application listed, not any message type that happens to be linked into the
// binary (descriptor types, types of unrelated libraries, huge or recursive
// ones). Other Go types are registered with RegisterJSON under an explicit
// name. The system messages (Watch, Terminated, ...) are built in.
//
// Registration is meant for start-up but is safe at any time; Serialize and
// Deserialize are lock-free (they read an immutable snapshot) and safe for
// concurrent use.
type Serializers struct {
	mu   sync.Mutex // serializes registrations
	tab  atomic.Pointer[serializerTables]
	last atomic.Pointer[typeCodec] // the codec codecFor found last: a stream of one type skips the map
}

type serializerTables struct {
	byType map[reflect.Type]*typeCodec
	byName map[nameKey]*typeCodec
}

type nameKey struct {
	ser  SerializerID
	name string
}

type typeCodec struct {
	typ     reflect.Type // the registered Go type (nil for the system codec)
	ser     SerializerID
	name    string
	marshal func(dst []byte, v any) ([]byte, error)
	// marshalQueued, when set, marshals an outbound item's message, which
	// estimate has just sized (protoMarshalSized); nil: marshal.
	marshalQueued func(dst []byte, v any) ([]byte, error)
	unmarshal     func([]byte) (any, error)
	size          func(v any) int // the exact encoded size, when cheap to know (nil: unknown)
	lastSize      atomic.Int64    // the last encoded size, for codecs without size
}

// itemOverhead is what a queued envelope counts for in an outbound queue's
// byte bound beyond its payload: the queue slot and the envelope's fields.
const itemOverhead = 64

// estimate is the size an outbound queue accounts for v before it is
// encoded: the exact encoded size when the codec knows it cheaply
// (protobuf), else the last encoded size of the type, plus itemOverhead.
// It runs on the sender's goroutine and allocates nothing. A panicking size
// function counts as unknown (the writer's encode reports the panic).
func (c *typeCodec) estimate(v any) (n int64) {
	n = c.lastSize.Load() + itemOverhead
	if c.size != nil {
		defer func() {
			if recover() != nil {
				n = c.lastSize.Load() + itemOverhead
			}
		}()
		n = int64(c.size(v)) + itemOverhead
	}
	return n
}

// encoded records the size of a payload the writer has just encoded, for
// estimate.
func (c *typeCodec) encoded(size int) {
	if c.size == nil && c.lastSize.Load() != int64(size) {
		c.lastSize.Store(int64(size))
	}
}

// NewSerializers returns a registry that knows only the system messages.
func NewSerializers() *Serializers {
	s := &Serializers{}
	s.tab.Store(&serializerTables{byType: map[reflect.Type]*typeCodec{}, byName: map[nameKey]*typeCodec{}})
	return s
}

func (s *Serializers) register(t reflect.Type, c *typeCodec) error {
	if c.name == "" || len(c.name) > maxTypeNameLen {
		return fmt.Errorf("%w: type name %q must be 1..%d bytes", ErrInvalidConfig, c.name, maxTypeNameLen)
	}
	if t.Implements(reflect.TypeFor[SystemMessage]()) {
		return fmt.Errorf("%w: %v is a system message, encoded by the system serializer", ErrInvalidConfig, t)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.tab.Load()
	if prev, ok := old.byType[t]; ok {
		return fmt.Errorf("%w: Go type %v already registered as %q", ErrAlreadyRegistered, t, prev.name)
	}
	if _, ok := old.byName[nameKey{c.ser, c.name}]; ok {
		return fmt.Errorf("%w: %s name %q already registered", ErrAlreadyRegistered, c.ser, c.name)
	}
	next := &serializerTables{byType: maps.Clone(old.byType), byName: maps.Clone(old.byName)}
	c.typ = t
	next.byType[t] = c
	next.byName[nameKey{c.ser, c.name}] = c
	s.tab.Store(next)
	return nil
}

// RegisterProto registers protobuf message types by their full names (for
// example "google.protobuf.StringValue"). Pass one value of each type (a nil
// typed pointer such as (*pb.Foo)(nil) is fine). Received messages are
// decoded into a new value of the registered type; other full names are
// refused with ErrUnknownType.
func (s *Serializers) RegisterProto(msgs ...proto.Message) error {
	for _, m := range msgs {
		if m == nil {
			return fmt.Errorf("%w: nil proto message", ErrInvalidConfig)
		}
		mt := m.ProtoReflect().Type()
		name := string(mt.Descriptor().FullName())
		newMsg := mt.New().Interface
		if rt := reflect.TypeOf(m); rt.Kind() == reflect.Pointer && rt.Elem().Kind() == reflect.Struct && !isDynamic(m) {
			// A generated message: its zero struct is a valid empty message,
			// and reflect.New makes one ~15% cheaper than the message
			// type's New (which also builds the reflective view that
			// Unmarshal builds again).
			elem := rt.Elem()
			newMsg = func() proto.Message { return reflect.New(elem).Interface().(proto.Message) }
		}
		c := &typeCodec{
			ser:  SerializerProto,
			name: name,
			marshal: func(dst []byte, v any) ([]byte, error) {
				return proto.MarshalOptions{}.MarshalAppend(dst, v.(proto.Message))
			},
			marshalQueued: func(dst []byte, v any) ([]byte, error) {
				return protoMarshalSized(dst, v.(proto.Message))
			},
			size: func(v any) int { return proto.Size(v.(proto.Message)) },
			unmarshal: func(b []byte) (any, error) {
				v := newMsg()
				if err := protoUnmarshal(b, v); err != nil {
					return nil, fmt.Errorf("%w: proto %s: %v", ErrMalformed, name, err)
				}
				return v, nil
			},
		}
		if err := s.register(reflect.TypeOf(m), c); err != nil {
			return err
		}
	}
	return nil
}

// RegisterJSON registers the Go type T, encoded with encoding/json, under
// name (which both sides must agree on). Messages are matched by their exact
// dynamic type: register *Foo to send and receive *Foo, Foo to send and
// receive Foo values. A received payload is decoded into a new T.
func RegisterJSON[T any](s *Serializers, name string) error {
	t := reflect.TypeFor[T]()
	if t.Kind() == reflect.Interface {
		return fmt.Errorf("%w: RegisterJSON needs a concrete type, got interface %v", ErrInvalidConfig, t)
	}
	c := &typeCodec{
		ser:  SerializerJSON,
		name: name,
		marshal: func(dst []byte, v any) ([]byte, error) {
			b, err := json.Marshal(v)
			if dst == nil || err != nil {
				return b, err
			}
			return append(dst, b...), nil
		},
		unmarshal: func(b []byte) (any, error) {
			if t.Kind() == reflect.Pointer {
				p := reflect.New(t.Elem())
				if err := json.Unmarshal(b, p.Interface()); err != nil {
					return nil, fmt.Errorf("%w: json %s: %v", ErrMalformed, name, err)
				}
				return p.Interface(), nil
			}
			var v T
			if err := json.Unmarshal(b, &v); err != nil {
				return nil, fmt.Errorf("%w: json %s: %v", ErrMalformed, name, err)
			}
			return v, nil
		},
	}
	return s.register(t, c)
}

// Serialize encodes msg with the serializer its type is registered with and
// appends the payload to dst. It returns ErrUnknownType for an unregistered
// type (protobuf types included: they must be registered too), and
// ErrCodecPanic when the codec panics.
func (s *Serializers) Serialize(dst []byte, msg any) (SerializerID, string, []byte, error) {
	c, err := s.codecFor(msg)
	if err != nil {
		return 0, "", dst, err
	}
	out, err := c.encode(dst, msg)
	if err != nil {
		return 0, "", dst, err
	}
	return c.ser, c.name, out, nil
}

// codecFor returns the codec msg is encoded with: the system codec for a
// SystemMessage, else its registered type's (ErrUnknownType if none). A
// Node looks the codec up when a message is sent, so that an unregistered
// type fails at once, and encodes with it later, on the endpoint's writer.
func (s *Serializers) codecFor(msg any) (*typeCodec, error) {
	t := reflect.TypeOf(msg)
	if c := s.last.Load(); c != nil && c.typ == t {
		return c, nil
	}
	if c, ok := s.tab.Load().byType[t]; ok {
		if s.last.Load() != c {
			s.last.Store(c)
		}
		return c, nil // user types first: they are the common case
	}
	if _, ok := msg.(SystemMessage); ok {
		return systemCodec, nil
	}
	return nil, fmt.Errorf("%w: %T is not registered (register it on every node that sends or receives it: Serializers.RegisterProto, remote.RegisterJSON)", ErrUnknownType, msg)
}

// systemCodec encodes the SystemMessage types; its name is empty on the
// wire.
var systemCodec = &typeCodec{
	ser: SerializerSystem,
	marshal: func(dst []byte, v any) ([]byte, error) {
		return AppendSystemMessage(dst, v.(SystemMessage))
	},
	unmarshal: func(b []byte) (any, error) { return DecodeSystemMessage(b) },
}

// encode appends the payload of v, which must be of c's type. A panic in
// the codec (user code: a MarshalJSON, a protobuf method) is recovered and
// returned as ErrCodecPanic with dst unchanged. The deferred recover is
// open-coded by the compiler: it costs no allocation and about a nanosecond
// per call, so every codec call has it rather than each caller.
func (c *typeCodec) encode(dst []byte, v any) (out []byte, err error) {
	return c.encodeWith(c.marshal, dst, v)
}

// encodeQueued is encode for the message of an outbound item, whose size
// estimate computed (see marshalQueued).
func (c *typeCodec) encodeQueued(dst []byte, v any) (out []byte, err error) {
	if c.marshalQueued != nil {
		return c.encodeWith(c.marshalQueued, dst, v)
	}
	return c.encodeWith(c.marshal, dst, v)
}

func (c *typeCodec) encodeWith(marshal func([]byte, any) ([]byte, error), dst []byte, v any) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = dst, c.panicked("serializing", p)
		}
	}()
	out, err = marshal(dst, v)
	if err != nil {
		if c.ser == SerializerSystem {
			return dst, err
		}
		return dst, fmt.Errorf("%w: %s %q: %w", ErrSerialize, c.ser, c.name, err)
	}
	return out, nil
}

// decode makes a message from payload. A panic in the codec (user code: an
// UnmarshalJSON, a protobuf method) is recovered and returned as
// ErrCodecPanic: any peer can send any bytes, so a codec that panics on some
// of them must cost that envelope, not the process.
func (c *typeCodec) decode(payload []byte) (v any, err error) {
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, c.panicked("deserializing", p)
		}
	}()
	return c.unmarshal(payload)
}

// panicked is the error of a recovered codec panic; it wraps the panic
// value when that is an error.
func (c *typeCodec) panicked(what string, p any) error {
	if pe, ok := p.(error); ok {
		return fmt.Errorf("%w: %s %s %q: %w", ErrCodecPanic, what, c.ser, c.name, pe)
	}
	return fmt.Errorf("%w: %s %s %q: %v", ErrCodecPanic, what, c.ser, c.name, p)
}

// Deserialize decodes a payload. An unknown serializer ID or type name gives
// ErrUnknownType (nothing is instantiated); bad bytes give ErrMalformed, a
// codec that panics gives ErrCodecPanic. The result never aliases payload.
func (s *Serializers) Deserialize(ser SerializerID, typeName string, payload []byte) (any, error) {
	c, err := s.codecNamed(ser, typeName)
	if err != nil {
		return nil, err
	}
	return c.decode(payload)
}

// codecNamed returns the codec registered for (ser, typeName), or the
// system codec.
func (s *Serializers) codecNamed(ser SerializerID, typeName string) (*typeCodec, error) {
	if ser == SerializerSystem {
		if typeName != "" {
			return nil, fmt.Errorf("%w: system message with type name %q", ErrUnknownType, typeName)
		}
		return systemCodec, nil
	}
	c, ok := s.tab.Load().byName[nameKey{ser, typeName}]
	if !ok {
		return nil, fmt.Errorf("%w: %s type %q is not registered on this node (register it here too)", ErrUnknownType, ser, typeName)
	}
	return c, nil
}

// isDynamic reports whether m is a dynamicpb message, whose zero value has
// no descriptor.
func isDynamic(m proto.Message) bool {
	_, ok := m.(*dynamicpb.Message)
	return ok
}
