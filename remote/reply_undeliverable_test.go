package remote_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// FailingReply is a JSON message whose encoder returns an error.
type FailingReply struct{}

func (*FailingReply) MarshalJSON() ([]byte, error) {
	return nil, errors.New("test: cannot encode the reply")
}

// A reply that its node can never encode (a type not registered there, a
// codec that fails, larger than a frame, from an actor whose ID is too
// long for the wire) does not leave the requester's
// future waiting out its deadline: the replier's node tells the future
// why, and the request fails at once with actor.ErrDeadLetter wrapping the
// sentinel.
func TestReplyThatCannotBeEncodedFailsTheRequest(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.Serializers = newSerializers(t, true) // A can decode OnlyA; B cannot encode it
	cfgB := testConfig(t)
	cfgB.MaxFrameSize = remote.MinFrameSize
	for _, c := range []*remote.Config{&cfgA, &cfgB} {
		require.NoError(t, remote.RegisterJSON[*FailingReply](c.Serializers, "test.FailingReply"))
	}
	sysA, _ := startSystem(t, "a", cfgA)
	sysB, rb := startSystem(t, "b", cfgB)
	// An actor whose ID is too long for the wire: its replies cannot leave.
	long, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Echo); ok {
			c.Respond(&EchoReply{Text: "from far too long a name"})
		}
	}), strings.Repeat("n", 5000))
	require.NoError(t, err)
	pid, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *Echo:
			switch m.Text {
			case "unregistered":
				c.Respond(&OnlyA{X: 1})
			case "failing":
				c.Respond(&FailingReply{})
			case "long sender":
				c.Forward(long)
			case "huge":
				c.Respond(&EchoReply{Text: strings.Repeat("x", 2*remote.MinFrameSize)})
			default:
				c.Respond(&EchoReply{Text: m.Text})
			}
		}
	}), "replier")
	require.NoError(t, err)
	replier := remotePID(pid)
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), replier, &Echo{Text: "fine"})
	require.NoError(t, err)
	require.Equal(t, "fine", rep.Text)

	for _, tc := range []struct {
		text string
		want error
	}{
		{"unregistered", remote.ErrUnknownType},
		{"failing", remote.ErrSerialize},
		{"huge", remote.ErrFrameTooLarge},
		{"long sender", remote.ErrMalformed},
	} {
		t.Run(tc.text, func(t *testing.T) {
			// Far longer than the answer may take.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			_, err := actor.Request[*EchoReply](ctx, sysA.Root(), replier, &Echo{Text: tc.text})
			require.ErrorIs(t, err, actor.ErrDeadLetter)
			require.ErrorIs(t, err, tc.want)
			require.NoError(t, ctx.Err(), "answered, not timed out")
			assert.Contains(t, err.Error(), "reported by "+pid.Address)
		})
	}

	// A Send of an unencodable message to an actor is a dead letter here;
	// the connection goes on.
	dl := events[*actor.DeadLetterEvent](t, sysB)
	sysB.Root().Send(actor.NewPID(sysA.Address(), "someone"), &NotRegistered{})
	waitFor(t, dl, "dead letter at b", deadLetterWith(remote.ErrUnknownType))
	rep, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), replier, &Echo{Text: "after"})
	require.NoError(t, err)
	require.Equal(t, "after", rep.Text)
	assert.EqualValues(t, 1, rb.Node().Stats().Connections)
}
