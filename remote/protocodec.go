package remote

import (
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/runtime/protoiface"
)

// The protobuf codec's two hot calls go to the message's fast-path methods
// (protoiface.Methods) directly, doing what proto.MarshalOptions and
// proto.UnmarshalOptions do around them minus what the outbound and inbound
// paths already know. The remote one-way profile (docs/benchmarks.md,
// "Remote one-way: the codec's direct calls") put about 40 % of the
// receiving process's CPU in decoding and a fifth of the sender's in
// encoding; these functions take out the part that was repeated work.

// protoMarshalSized appends the encoding of m, whose size proto.Size
// computed since it last changed (which cached its nested messages' sizes): an outbound item's estimate
// (typeCodec.estimate) did that on the sender's goroutine, and the queue's
// hand-over orders it before this call on the writer's.
//
// proto.Marshal computes the size of the whole message a second time (to
// size its buffer and fill the nested messages' cached sizes) before it
// marshals; here the buffer grows as it is appended to and the nested sizes
// are the ones the estimate cached. A message changed between its send and
// its encoding (a data race in the sender's code) cannot produce a corrupt
// envelope: protobuf-go (v1.36) checks every cached nested size, lazy and
// opaque fields included, against the bytes it wrote and fails the marshal
// (the envelope goes to Undelivered with the error). Were a later protobuf
// not to check one, the damage would stay inside that message's payload:
// the envelope frames the payload by the length actually written, so the
// frame and the envelopes after it are unaffected. Types without the
// fast-path methods take proto.Marshal's path.
func protoMarshalSized(dst []byte, m proto.Message) ([]byte, error) {
	r := m.ProtoReflect()
	methods := r.ProtoMethods()
	if methods == nil || methods.Marshal == nil || methods.Size == nil {
		return proto.MarshalOptions{}.MarshalAppend(dst, m)
	}
	out, err := methods.Marshal(protoiface.MarshalInput{Message: r, Buf: dst, Flags: protoiface.MarshalUseCachedSize})
	if err != nil {
		return dst, err
	}
	if err := proto.CheckInitialized(m); err != nil { // proto.Marshal's check of required fields
		return dst, err
	}
	return out.Buf, nil
}

// protoUnmarshal decodes b into m, a new empty message, as
// proto.UnmarshalOptions{Merge: true}.Unmarshal does: the same resolver
// (the global types, for extensions), the same recursion limit, the same
// check of required fields. It skips that function's option handling, which
// the profile showed costing about a tenth of a small message's decoding.
func protoUnmarshal(b []byte, m proto.Message) error {
	r := m.ProtoReflect()
	methods := r.ProtoMethods()
	if methods == nil || methods.Unmarshal == nil {
		return proto.UnmarshalOptions{Merge: true}.Unmarshal(b, m)
	}
	out, err := methods.Unmarshal(protoiface.UnmarshalInput{
		Message:  r,
		Buf:      b,
		Resolver: protoregistry.GlobalTypes,
		Depth:    protowire.DefaultRecursionLimit,
		Flags:    protoiface.UnmarshalCheckRequired,
	})
	if err != nil {
		return err
	}
	if out.Flags&protoiface.UnmarshalInitialized == 0 {
		return proto.CheckInitialized(m)
	}
	return nil
}
