package remote_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// A MessageEnvelope's header crosses nodes over loopback TCP: the remote
// actor sees the message and the header, and an enveloped answer completes
// the requester's future with the message.
func TestHeaderTravelsAcrossNodes(t *testing.T) {
	sysA, _ := startSystem(t, "a", testConfig(t))
	sysB, _ := startSystem(t, "b", testConfig(t))
	seen := make(chan actor.Header, 1)
	pid := sysB.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Echo); ok {
			seen <- c.MessageHeader()
			c.Respond(&actor.MessageEnvelope{Header: actor.Header{"reply": "1"}, Message: &EchoReply{Text: m.Text, By: "b"}})
		}
	}))
	hdr := actor.Header{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "tracestate": "k=v"}
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), remotePID(pid), &actor.MessageEnvelope{Header: hdr, Message: &Echo{Text: "hi"}})
	require.NoError(t, err)
	require.Equal(t, "hi", rep.Text)
	require.Equal(t, hdr, <-seen)
	// A message without a header arrives without one.
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), remotePID(pid), &Echo{Text: "plain"})
	require.NoError(t, err)
	require.Nil(t, <-seen)
}
