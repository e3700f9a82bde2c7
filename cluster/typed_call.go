package cluster

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"
	"weak"

	"google.golang.org/protobuf/proto"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
)

// GrainMessages is the set of protobuf messages of one typed grain service
// (its requests and replies). Generated code declares one per service and
// hands it to NewGrainKind and Register, so the messages are registered
// with the remote serializers (by full name) of every member that hosts or
// calls the service; users never register them. Safe for concurrent use.
type GrainMessages struct {
	msgs []proto.Message
	done sync.Map // weak.Pointer[remote.Serializers] → struct{}: registered there
}

// NewGrainMessages returns the set of msgs (typed nil pointers are fine).
func NewGrainMessages(msgs ...proto.Message) *GrainMessages {
	return &GrainMessages{msgs: msgs}
}

// Register registers the messages with c's remote serializers, once per
// registry; a message already registered there is kept. Generated clients
// call it in their constructor. A detached Cluster has no serializers:
// nothing to do. A nil c is ErrNotInstalled.
func (m *GrainMessages) Register(c *Cluster) error {
	if c == nil {
		return ErrNotInstalled
	}
	if c.remote == nil {
		return nil
	}
	return m.register(c.remote.Serializers())
}

func (m *GrainMessages) register(s *remote.Serializers) error {
	key := weak.Make(s)
	if _, ok := m.done.Load(key); ok {
		return nil
	}
	for _, msg := range m.msgs {
		if err := s.RegisterProto(msg); err != nil && !errors.Is(err, remote.ErrAlreadyRegistered) {
			return err
		}
	}
	m.done.Store(key, struct{}{})
	return nil
}

// Call sends req to the typed grain id and waits for its reply of type T,
// as Request does (activation, retries within ctx, Config.RequestTimeout
// without a deadline, the same errors); an error the grain method returned
// arrives as *GrainError. A reply that arrived ends the call, an error
// reply included (it is not retried); but a request whose reply did not
// arrive within Config.AttemptTimeout is sent again like any request, so a
// method may run more than once for one call (a slow method, a lost
// reply): make methods that change state idempotent, or key them by a
// request ID. A nil protobuf message pointer is sent as an
// empty message; a req that is nil without a type fails at once with
// remote.ErrUnknownType, wherever the grain runs, and so does a message
// whose required (proto2) fields are not set, with remote.ErrSerialize:
// it could not be encoded. On a nil c (Get found no cluster) it fails
// with ErrNotInstalled. Generated clients call it.
func Call[T any](ctx context.Context, c *Cluster, id Identity, req any) (T, error) {
	req = emptyIfNil(req)
	if c != nil {
		if err := checkInitialized(req); err != nil {
			var zero T
			return zero, err
		}
	}
	res, err := c.request(ctx, id, req)
	if err != nil {
		var zero T
		return zero, err
	}
	return GrainReply[T](res)
}

// GrainReply returns a typed grain's raw reply as T, or the grain's error
// as *GrainError: for a reply obtained without Call, as by an
// actor.RequestFuture to the grain's PID or a test probe
// (testkit.CallGrain). Another type is *actor.TypeMismatchError.
func GrainReply[T any](reply any) (T, error) {
	var zero T
	// The grain's error first: an interface T (proto.Message, any) would
	// take the wire message as a reply, with a nil error.
	switch r := reply.(type) {
	case *clusterpb.GrainError:
		return zero, &GrainError{Code: r.Code, Message: r.Message}
	case *GrainError:
		return zero, r
	}
	if v, ok := reply.(T); ok {
		return v, nil
	}
	return zero, &actor.TypeMismatchError{Want: reflect.TypeFor[T](), Got: reply}
}

// CallFuture sends req to the typed grain id and returns a future of its
// reply without blocking the caller, as Cluster.RequestFuture does: a grain
// calls another grain with it and pipes the result to itself
// (future.PipeTo(ctx.Self())), so no worker waits. The future completes
// with the reply, or fails with *GrainError (the grain method's error) or
// Request's errors; ErrTimeout after timeout (Config.RequestTimeout when
// timeout ≤ 0); on a nil c it has failed with ErrNotInstalled, and for a
// req whose required (proto2) fields are not set with remote.ErrSerialize,
// as Call's. A local
// grain's turn may wait for the caller's Result, as with RequestFuture.
// Generated clients' XxxFuture methods call it.
func CallFuture(c *Cluster, id Identity, req any, timeout time.Duration) *actor.Future {
	if c == nil {
		return actor.FailedFuture(ErrNotInstalled)
	}
	req = emptyIfNil(req)
	if err := checkInitialized(req); err != nil {
		// A future of the system: a grain's ReenterAfter on it runs.
		f := c.root.NewFuture(0)
		f.Complete(nil, err)
		return f
	}
	if c.det != nil {
		return c.futureDetached(id, req, timeout, true)
	}
	// The mapping may run where the grain's answer completes the request
	// (warm_call.go: a worker, a remote reader): a type check and an
	// allocation, which cannot block or panic.
	return c.requestFuture(id, req, timeout, func(res any, err error) (any, error) {
		if ge, ok := res.(*clusterpb.GrainError); ok && err == nil {
			return nil, &GrainError{Code: ge.Code, Message: ge.Message}
		}
		return res, err
	})
}

// checkInitialized returns the error remote's serializer gives for msg
// when msg is a protobuf message with a required field (proto2) that is
// not set, wrapping remote.ErrSerialize: such a message cannot be encoded.
// Call and CallFuture refuse it wherever the grain runs, so the same call
// does not reach a grain on the caller's member and fail for one on
// another (TestTypedGrainProto2RequiredFields). A message without
// required fields is checked by a flag of its type: no allocation.
func checkInitialized(msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return nil
	}
	if err := proto.CheckInitialized(m); err != nil {
		return fmt.Errorf("%w: proto %q: %w", remote.ErrSerialize, m.ProtoReflect().Descriptor().FullName(), err)
	}
	return nil
}

// checkedReply returns reply, the reply of grain id's method, or a
// GrainError of CodeInternal naming the field when reply is a protobuf
// message with a required field (proto2) that is not set: it could not
// reach a caller on another member (remote could not encode it), and a
// caller on the grain's member gets the same error.
func checkedReply(id Identity, reply any) any {
	m, ok := reply.(proto.Message)
	if !ok {
		return reply
	}
	if err := proto.CheckInitialized(m); err != nil {
		return &clusterpb.GrainError{Code: CodeInternal, Message: wireText(fmt.Sprintf("grain %s: reply %s: %v", id, m.ProtoReflect().Descriptor().FullName(), err))}
	}
	return reply
}

// emptyIfNil returns msg, or a new empty message of its type when msg is a
// nil protobuf message pointer. A nil request or reply (a client's
// Deposit(ctx, nil), a DeferredReply's Reply(nil, nil)) crosses the wire as
// an empty message; on the member of the grain or of the caller it would
// arrive as the nil pointer, and the same call would behave differently
// by placement. It allocates only for a nil message.
func emptyIfNil(msg any) any {
	if m, ok := msg.(proto.Message); ok && !m.ProtoReflect().IsValid() {
		return m.ProtoReflect().Type().New().Interface()
	}
	return msg
}
