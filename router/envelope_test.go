package router_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/router"
	"github.com/fraktor-go/fraktor/testkit"
)

// traced wraps msg as the tracing middleware (or a remote node, or a
// Forward of a traced message) delivers it: in an actor.MessageEnvelope.
func traced(msg any) any {
	return &actor.MessageEnvelope{Header: actor.Header{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}, Message: msg}
}

// TestEnvelopedMessagesAreRoutedByWhatTheyCarry: a message that arrives
// with a header is routed as the message it carries: a consistent-hash key
// is the carried message's, management messages, PoisonPill and
// BroadcastMessage keep their meaning, and the routee still gets the header.
func TestEnvelopedMessagesAreRoutedByWhatTheyCarry(t *testing.T) {
	ms := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, ms)
	headers := testkit.NewManualProbe(t, ms)
	props := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *keyed:
			c.Respond(c.Self())
		case string:
			c.Send(headers.PID(), m+" "+c.MessageHeader().Get("traceparent"))
		}
	})
	r, err := router.SpawnPool(ms.Root(), props, 4, router.ConsistentHash())
	require.NoError(t, err)

	// The hash key is the carried message's: the same routee as untraced.
	p.Send(r, &keyed{"user-7"})
	want := testkit.ExpectMsg[*actor.PID](p, time.Second)
	p.Send(r, traced(&keyed{"user-7"}))
	got := testkit.ExpectMsg[*actor.PID](p, time.Second)
	assert.True(t, got.Equal(want), "traced key went to %s, untraced to %s", got, want)

	// A management message reaches the router's actor, not a routee.
	p.Send(r, traced(&router.GetRoutees{}))
	pool := testkit.ExpectMsg[*router.Routees](p, time.Second).PIDs
	require.Len(t, pool, 4)

	// A BroadcastMessage reaches every routee, with the header.
	p.Send(r, traced(&router.BroadcastMessage{Message: "all"}))
	for range pool {
		assert.Equal(t, "all 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
			testkit.ExpectMsg[string](headers, time.Second))
	}
	headers.ExpectNoMsg(0)

	// A PoisonPill stops the router, not one routee.
	p.Watch(r)
	p.Send(r, traced(&actor.PoisonPill{}))
	p.ExpectTerminated(r, time.Second)
}

// A nil *BroadcastMessage (bare or with a header) is refused as a dead
// letter that wraps actor.ErrDeadLetter; before, it panicked on the
// sender's goroutine (a nil dereference in the router's SendUser).
func TestNilBroadcastIsRefused(t *testing.T) {
	sys := testkit.NewSystem(t)
	r, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(actor.Context) {}), 2, router.RoundRobin())
	require.NoError(t, err)
	for _, msg := range []any{(*router.BroadcastMessage)(nil), traced((*router.BroadcastMessage)(nil))} {
		_, err := sys.Root().RequestFuture(r, msg, time.Second).Result()
		require.ErrorIs(t, err, actor.ErrDeadLetter)
	}
	// The router still routes.
	echo, err := router.SpawnPool(sys.Root(), actor.PropsFromFunc(func(c actor.Context) {
		if s, ok := c.Message().(string); ok {
			c.Respond(s)
		}
	}), 2, router.RoundRobin())
	require.NoError(t, err)
	sys.Root().Send(echo, (*router.BroadcastMessage)(nil))
	res, err := sys.Root().RequestFuture(echo, "still", time.Second).Result()
	require.NoError(t, err)
	assert.Equal(t, "still", res)
}
