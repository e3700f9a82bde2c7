package remote_test

// Found porting a Hollywood program (examples/hollywood,
// docs/coming-from-hollywood.md): Hollywood's protobuf messages decode
// wherever the generated package is linked, so a Hollywood user does not
// expect a reply type to need registering on the requesting node too.

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

type (
	newuser9Req   struct{ N int }
	newuser9Reply struct{ N int }
)

// newuser9Node starts a system with remote on loopback TCP whose
// serializers register what register adds.
func newuser9Node(t *testing.T, name string, register func(*remote.Serializers) error) *actor.System {
	t.Helper()
	ser := remote.NewSerializers()
	require.NoError(t, register(ser))
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0"
	cfg.SystemName = "newuser9"
	cfg.Serializers = ser
	sys, err := actor.NewSystem(actor.SystemConfig{Name: name, Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	return sys
}

// DEFECT (fixed on 2026-11-25; the test failed before). The replier's node registers the request and the reply types; the
// requester's node registers only the request (the reply type forgotten).
//
// Expected: the request fails soon with an error matching
// remote.ErrUnknownType, as every other undeliverable reply does
// (docs/remote.md, "Dead letters": a reply that cannot be encoded fails the
// request "at once ... instead of waiting out its deadline",
// TestReplyThatCannotBeEncodedFailsTheRequest; a request the receiver
// cannot decode fails with ErrDeadLetter wrapping ErrUnknownType,
// TestUnregisteredType).
//
// What happened: the requester's node cannot decode the reply, makes it a
// dead letter there (and sends the replier a *DeadLetterResponse), but the
// future the reply was addressed to, on this very node, is left waiting: the
// request ends with a bare "actor: timeout: context deadline exceeded"
// after the whole deadline, and nothing in the error says that a type is
// not registered.
//
// Suggested fix: where remote's reader drops an inbound envelope it cannot
// decode (ErrUnknownType, ErrMalformed, ErrCodecPanic) whose target is a
// local future (actor.IsFutureID), complete that future with
// actor.ErrDeadLetter wrapping the reason, as it does for a
// *DeadLetterResponse.
func TestNewuser9UndecodableReplyFailsTheRequest(t *testing.T) {
	replier := newuser9Node(t, "replier", func(s *remote.Serializers) error {
		if err := remote.RegisterJSON[*newuser9Req](s, "newuser9.Req"); err != nil {
			return err
		}
		return remote.RegisterJSON[*newuser9Reply](s, "newuser9.Reply")
	})
	requester := newuser9Node(t, "requester", func(s *remote.Serializers) error {
		return remote.RegisterJSON[*newuser9Req](s, "newuser9.Req") // the reply type forgotten
	})
	_, err := replier.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*newuser9Req); ok {
			c.Respond(&newuser9Reply{N: m.N})
		}
	}), "replier")
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err = actor.Request[any](ctx, requester.Root(), actor.NewPID(replier.Address(), "replier"), &newuser9Req{N: 1})
	took := time.Since(start)
	require.ErrorIs(t, err, remote.ErrUnknownType, "after %v", took)
	require.Less(t, took, 4*time.Second, "the request waited out its deadline")
}
