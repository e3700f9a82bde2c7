package cluster_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Unregistered is a message type no serializer knows.
type Unregistered struct{}

// PanicCodec is a JSON message whose encoder panics.
type PanicCodec struct{}

func (*PanicCodec) MarshalJSON() ([]byte, error) { panic("test: codec bug") }

// FailCodec is a JSON message whose encoder returns an error.
type FailCodec struct{}

func (*FailCodec) MarshalJSON() ([]byte, error) { return nil, errors.New("test: cannot encode") }

// OnlyClient is a JSON message the client registers and the owner does
// not, as a newer client's request to an older grain.
type OnlyClient struct{ N int }

// DecodePanic is a JSON message whose decoder panics (on the owner).
type DecodePanic struct{}

func (*DecodePanic) UnmarshalJSON([]byte) error { panic("test: decoder bug") }

// A request that remote cannot encode (an unregistered type, a codec that
// panics or fails, an envelope larger than a frame: a huge identity, a field
// longer than remote allows: a grain PID of a long identity; an identity
// that is not UTF-8, refused as invalid before) fails the same way on every
// attempt: it is returned at once with remote's error, as
// ErrNoSuchKind is, instead of being retried until the attempts or the
// deadline run out and reported as ErrTimeout. So does one the owner
// cannot decode (a type it has not registered, a decoder that panics).
func TestClusterUnsendableRequestNotRetried(t *testing.T) {
	reg := newRegistry(t)
	client, owner := startMember(t, reg), startMember(t, reg, counterKind()) // every grain on owner
	awaitMembers(t, 2, client, owner)
	require.NoError(t, remote.RegisterJSON[*PanicCodec](remote.Get(client.sys).Serializers(), "test.PanicCodec"))
	require.NoError(t, remote.RegisterJSON[*FailCodec](remote.Get(client.sys).Serializers(), "test.FailCodec"))
	require.NoError(t, remote.RegisterJSON[*OnlyClient](remote.Get(client.sys).Serializers(), "test.OnlyClient"))
	for _, m := range []node{client, owner} {
		require.NoError(t, remote.RegisterJSON[*DecodePanic](remote.Get(m.sys).Serializers(), "test.DecodePanic"))
	}
	_, err := cluster.Request[*Total](ctxWait(t), client.c, cluster.NewIdentity("counter", "1"), &Get{})
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		id   cluster.Identity
		msg  any
		want error
	}{
		{"unregistered type", cluster.NewIdentity("counter", "1"), &Unregistered{}, remote.ErrUnknownType},
		{"nil message", cluster.NewIdentity("counter", "1"), nil, remote.ErrUnknownType},
		{"codec panics", cluster.NewIdentity("counter", "1"), &PanicCodec{}, remote.ErrCodecPanic},
		{"codec fails", cluster.NewIdentity("counter", "1"), &FailCodec{}, remote.ErrSerialize},
		{"identity larger than a frame", cluster.NewIdentity("counter", strings.Repeat("x", 5<<20)), &Get{}, remote.ErrFrameTooLarge},
		// The activation request fits, and the owner activates the grain,
		// but remote refuses the grain's PID: longer than a process ID
		// may be (4096 bytes).
		{"grain PID longer than remote allows", cluster.NewIdentity("counter", strings.Repeat("x", 5000)), &Get{}, remote.ErrMalformed},
		{"identity not UTF-8", cluster.NewIdentity("counter", "a\xffb"), &Get{}, cluster.ErrInvalidIdentity},
		// What the owner cannot decode fails alike: its node answers with
		// the reason.
		{"type unknown at the owner", cluster.NewIdentity("counter", "1"), &OnlyClient{N: 1}, remote.ErrUnknownType},
		{"codec panics at the owner", cluster.NewIdentity("counter", "1"), &DecodePanic{}, remote.ErrCodecPanic},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Far more time than the retries take, which the request must
			// not spend.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := cluster.Request[*Total](ctx, client.c, tc.id, tc.msg)
			if !errors.Is(err, tc.want) || errors.Is(err, cluster.ErrTimeout) {
				t.Fatalf("err %.300v, want %v, not retried", err, tc.want)
			}
			fut := client.c.RequestFuture(tc.id, tc.msg, time.Minute)
			if _, err := fut.Result(); !errors.Is(err, tc.want) || errors.Is(err, cluster.ErrTimeout) {
				t.Fatalf("RequestFuture: err %.300v, want %v, not retried", err, tc.want)
			}
		})
	}
}

// A grain whose reply its member cannot encode (here a type the owner has
// not registered) ran the request once: the caller fails at once with the
// owner's reason instead of timing out each attempt and retrying, which
// would run the grain's handler again on every attempt.
func TestClusterUnsendableReplyNotRetried(t *testing.T) {
	reg := newRegistry(t)
	var handled atomic.Int32
	kind := cluster.NewKind("replier", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Get); ok {
			handled.Add(1)
			c.Respond(&OnlyClient{N: 1})
		}
	}))
	client, owner := startMember(t, reg), startMember(t, reg, kind) // every grain on owner
	awaitMembers(t, 2, client, owner)
	require.NoError(t, remote.RegisterJSON[*OnlyClient](remote.Get(client.sys).Serializers(), "test.OnlyClient"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := cluster.Request[*OnlyClient](ctx, client.c, cluster.NewIdentity("replier", "1"), &Get{})
	if !errors.Is(err, remote.ErrUnknownType) || !errors.Is(err, actor.ErrDeadLetter) || errors.Is(err, cluster.ErrTimeout) {
		t.Fatalf("err %.300v, want the owner's ErrUnknownType, not retried", err)
	}
	require.EqualValues(t, 1, handled.Load(), "the grain handled the request once")
}
