package clusterbench

import (
	"github.com/fraktor-go/fraktor/cluster"

	"context"
	"time"

	"google.golang.org/protobuf/types/known/wrapperspb"
)

// The implementation names, as used in benchmark names (impl=NAME).
const (
	ImplFraktor = "fraktor"
	ImplProto   = "protoactor"
)

// Settings shared by both implementations.
const (
	// PayloadSize is the size of the bytes field of every measured message.
	PayloadSize = 64
	// Kind is the grain kind every member hosts.
	Kind = "echo"
	// echoName is the ordinary echo actor every member spawns, the target
	// of the plain remote round trip.
	echoName = "echo-actor"
	// readyLimit bounds waiting for the members to see each other.
	readyLimit = 30 * time.Second
	// callLimit bounds one request.
	callLimit = 10 * time.Second
)

// Cluster is a running cluster of one implementation. Its methods are safe
// for concurrent use.
type Cluster interface {
	// Members is the number of members.
	Members() int
	// Request sends msg to grain id (of Kind) from member from and waits
	// for the reply, which must be msg's payload.
	Request(ctx context.Context, from int, id string, msg *wrapperspb.BytesValue) error
	// RemoteRequest sends msg from member from to the ordinary echo actor
	// of member to (plain remote, no cluster lookup) and waits for the reply.
	RemoteRequest(ctx context.Context, from, to int, msg *wrapperspb.BytesValue) error
	// Owner returns the member that owns id by the view of member from,
	// without activating it.
	Owner(from int, id string) (int, error)
	// Close stops every member, waiting at most until ctx ends.
	Close(ctx context.Context) error
}

// Options sizes a cluster.
type Options struct {
	// Members is the number of members (default 3).
	Members int
	// PidCacheCapacity is fraktor's PidCache capacity per member (default:
	// the cluster's default); protoactor-go's cache is unbounded.
	PidCacheCapacity int
	// FraktorKinds are more kinds every fraktor member hosts (the typed
	// grain benchmark's); protoactor-go ignores them.
	FraktorKinds []cluster.Kind
}

// Start starts a cluster of impl and waits until every member sees every
// other.
func Start(impl string, opts Options) (Cluster, error) {
	if opts.Members <= 0 {
		opts.Members = 3
	}
	switch impl {
	case ImplFraktor:
		return startFraktor(opts)
	case ImplProto:
		return startProto(opts)
	default:
		return nil, ErrUnknownImpl
	}
}

// payload returns a fresh measured message.
func payload() *wrapperspb.BytesValue {
	p := make([]byte, PayloadSize)
	for i := range p {
		p[i] = byte(i)
	}
	return wrapperspb.Bytes(p)
}

// checkReply reports whether reply carries the payload of sent.
func checkReply(reply any, sent *wrapperspb.BytesValue) error {
	m, ok := reply.(*wrapperspb.BytesValue)
	if !ok || len(m.GetValue()) != len(sent.GetValue()) {
		return ErrBadReply
	}
	return nil
}
