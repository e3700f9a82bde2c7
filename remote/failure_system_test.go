package remote_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// TestOutboundQueueOverflow: a peer that does not answer gets at most
// OutboundQueueSize queued envelopes; the rest become dead letters with
// ErrQueueFull, counted, at once.
func TestOutboundQueueOverflow(t *testing.T) {
	const queue, sent = 4, 100
	cfg := testConfig(t)
	cfg.OutboundQueueSize = queue
	sysA, ra := startSystem(t, "a", cfg)
	dl := events[*actor.DeadLetterEvent](t, sysA)
	target := actor.NewPID(closedAddress(t), "x")
	for i := range sent {
		sysA.Root().Send(target, &Seq{N: i})
	}
	// The endpoint holds at most queue envelopes plus the one it is trying
	// to deliver; every other one overflowed.
	for range sent - queue - 1 {
		e := waitFor(t, dl, "overflow dead letter", nil)
		require.ErrorIs(t, e.Reason, remote.ErrQueueFull)
		assert.Equal(t, target.Address, e.PID.Address)
	}
	assert.GreaterOrEqual(t, sysA.DeadLetters(), uint64(sent-queue-1))
	assert.GreaterOrEqual(t, ra.Node().Stats().Undelivered, uint64(sent-queue-1))

	// A request that overflows fails at once with the reason.
	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), target, &Echo{})
	require.ErrorIs(t, err, remote.ErrQueueFull)
}

// TestSystemBlockListBothWays: blocking a node terminates its endpoint (watchers
// get AddressTerminated), turns what we send it into dead letters
// (ErrBlocked), refuses its handshakes so that nothing it sends arrives, and
// publishes the change; unblocking restores both directions.
func TestSystemBlockListBothWays(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = 500 * time.Millisecond
	sysA, ra := startSystem(t, "a", cfg)
	sysB, rb := startSystem(t, "b", cfg)
	echoB := remotePID(echoOn(t, sysB, "echo", "b"))
	echoA := echoOn(t, sysA, "echo", "a")
	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echoB, &Echo{})
	require.NoError(t, err)
	probe := newProbeWatching(t, sysA, echoB)

	blocks := events[*remote.BlockEvent](t, sysA)
	ends := events[*remote.EndpointTerminated](t, sysA)
	transportA := events[*remote.Event](t, sysA)
	transportB := events[*remote.Event](t, sysB)
	dlA := events[*actor.DeadLetterEvent](t, sysA)
	dlB := events[*actor.DeadLetterEvent](t, sysB)

	ra.BlockList().Block(rb.NodeID())
	ev := waitFor(t, blocks, "block event", nil)
	assert.True(t, ev.Blocked)
	assert.Equal(t, []string{rb.NodeID()}, ev.Keys)
	end := waitFor(t, ends, "endpoint terminated", nil)
	assert.ErrorIs(t, end.Reason, remote.ErrBlocked)
	term := probe.ExpectTerminated(echoB, wait)
	assert.Equal(t, actor.TerminatedAddressTerminated, term.Why)

	// a → b: dropped at once as a dead letter; a request fails at once.
	_, err = actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echoB, &Echo{Text: "blocked"})
	require.ErrorIs(t, err, remote.ErrBlocked)
	waitFor(t, dlA, "dead letter at a", deadLetterWith(remote.ErrBlocked))

	// b → a: b's connection was closed and its reconnections are refused
	// in the handshake (both sides see it); nothing b sends arrives at a,
	// and b's request becomes a dead letter at b after give-up.
	waitFor(t, transportA, "a refuses b", func(e *remote.Event) bool {
		return e.Kind == remote.EventHandshakeRefused && e.Inbound && errors.Is(e.Err, remote.ErrBlocked)
	})
	waitFor(t, transportB, "b told it is blocked", func(e *remote.Event) bool {
		var rej *remote.RejectError
		return e.Kind == remote.EventHandshakeRefused && !e.Inbound && errors.As(e.Err, &rej) && rej.Code == remote.RejectBlocked
	})
	_, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remotePID(echoA), &Echo{Text: "from b"})
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	waitFor(t, dlB, "dead letter at b", deadLetterWith(remote.ErrPeerUnreachable))

	// Unblocked: both directions work again.
	ra.BlockList().Unblock(rb.NodeID())
	ev = waitFor(t, blocks, "unblock event", nil)
	assert.False(t, ev.Blocked)
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echoB, &Echo{Text: "again"})
	require.NoError(t, err)
	assert.Equal(t, "again", rep.Text)
	rep, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remotePID(echoA), &Echo{Text: "back"})
	require.NoError(t, err)
	assert.Equal(t, "a", rep.By)
}

// TestStaleTerminationSparesNewRequests: a request made once the dead
// letters of a given-up endpoint are published goes to a new endpoint, and
// the old endpoint's termination report does not fail it. (The request is
// made on the goroutine that publishes the dead letter, inside the event
// stream's predicate, so that it comes before anything the old endpoint
// does afterwards.)
func TestStaleTerminationSparesNewRequests(t *testing.T) {
	cfg := testConfig(t)
	cfg.GiveUpAfter = 300 * time.Millisecond
	sysA, ra := startSystem(t, "a", cfg)
	sysB, rb := startSystem(t, "b", cfg)
	echoA := remotePID(echoOn(t, sysA, "echo", "a"))
	_, err := actor.Request[*EchoReply](ctxWait(t), sysB.Root(), echoA, &Echo{})
	require.NoError(t, err)
	ends := events[*remote.EndpointTerminated](t, sysB)

	// a refuses b: b's endpoint for a gives up with a request queued.
	ra.BlockList().Block(rb.NodeID())
	waitFor(t, ends, "b's endpoint for a ends", nil)
	after := make(chan *actor.Future, 1)
	sub := sysB.EventStream().SubscribeWithPredicate(func(any) {}, func(ev any) bool {
		dl, ok := ev.(*actor.DeadLetterEvent)
		if !ok || !errors.Is(dl.Reason, remote.ErrPeerUnreachable) {
			return false
		}
		if e, ok := dl.Message.(*Echo); ok && e.Text == "queued" {
			ra.BlockList().Unblock(rb.NodeID())
			after <- sysB.Root().RequestFuture(echoA, &Echo{Text: "after"}, 0)
		}
		return false
	})
	defer sysB.EventStream().Unsubscribe(sub)
	_, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), echoA, &Echo{Text: "queued"})
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)

	var f *actor.Future
	select {
	case f = <-after:
	case <-time.After(wait):
		t.Fatal("no dead letter for the queued request")
	}
	rep, err := f.ResultContext(ctxWait(t))
	require.NoError(t, err, "the old endpoint's report failed a request made after it gave up")
	assert.Equal(t, "after", rep.(*EchoReply).Text)
}

// TestUnregisteredType: a message type the sender has not registered is a
// dead letter at the sender with ErrUnknownType; one the receiver has not
// registered is a dead letter at the receiver (logged, with an
// EventUnknownType event) and the sender's request fails at once, with
// ErrUnknownType as its reason. The
// connection stays up: later messages get through.
func TestUnregisteredType(t *testing.T) {
	cfgA := testConfig(t)
	cfgA.Serializers = newSerializers(t, true) // knows OnlyA
	sysA, _ := startSystem(t, "a", cfgA)
	sysB, rb := startSystem(t, "b", testConfig(t))
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{})
	require.NoError(t, err)
	dlA := events[*actor.DeadLetterEvent](t, sysA)
	dlB := events[*actor.DeadLetterEvent](t, sysB)
	transportB := events[*remote.Event](t, sysB)

	t.Run("unknown at the sender", func(t *testing.T) {
		sysA.Root().Send(echo, &NotRegistered{X: 1})
		e := waitFor(t, dlA, "dead letter at a", deadLetterWith(remote.ErrUnknownType))
		assert.Equal(t, &NotRegistered{X: 1}, e.Message)
		assert.Contains(t, e.Reason.Error(), "NotRegistered")
		_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &NotRegistered{})
		require.ErrorIs(t, err, remote.ErrUnknownType)
	})
	t.Run("unknown at the receiver", func(t *testing.T) {
		_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &OnlyA{X: 2})
		require.ErrorIs(t, err, actor.ErrDeadLetter)
		require.ErrorIs(t, err, remote.ErrUnknownType, "the receiver's reason reached the sender")
		assert.Contains(t, err.Error(), "reported by "+echo.Address)
		e := waitFor(t, dlB, "dead letter at b", deadLetterWith(remote.ErrUnknownType))
		assert.Equal(t, "echo", e.PID.ID)
		assert.Contains(t, e.Reason.Error(), "test.OnlyA")
		waitFor(t, transportB, "unknown-type event", func(e *remote.Event) bool { return e.Kind == remote.EventUnknownType })
	})
	t.Run("node keeps serving", func(t *testing.T) {
		rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "still here"})
		require.NoError(t, err)
		assert.Equal(t, "still here", rep.Text)
		st := rb.Node().Stats()
		assert.Zero(t, st.ProtocolErrors)
		assert.EqualValues(t, 1, st.Connections, "the same connection carried everything")
	})
}

// TestSystemMutualTLS: two systems talk over mutual TLS with certificates made in
// the test; a system whose certificate comes from another CA is refused and
// its messages become dead letters.
func TestSystemMutualTLS(t *testing.T) {
	ca := remote.NewTestCA(t)
	cfg := func(name string, c *remote.TestCA) remote.Config {
		cfg := c.MTLSConfig(t, name)
		cfg.Serializers = newSerializers(t, false)
		cfg.GiveUpAfter = 500 * time.Millisecond
		return cfg
	}
	sysA, _ := startSystem(t, "a", cfg("a", ca))
	sysB, _ := startSystem(t, "b", cfg("b", ca))
	echoB := echoOn(t, sysB, "echo", "b")
	echoA := echoOn(t, sysA, "echo", "a")
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), remotePID(echoB), &Echo{Text: "secret"})
	require.NoError(t, err)
	assert.Equal(t, &EchoReply{Text: "secret", By: "b"}, rep)
	rep, err = actor.Request[*EchoReply](ctxWait(t), sysB.Root(), remotePID(echoA), &Echo{Text: "back"})
	require.NoError(t, err)
	assert.Equal(t, "a", rep.By)

	transportB := events[*remote.Event](t, sysB)
	strangerCfg := cfg("stranger", remote.NewTestCA(t))
	strangerCfg.ClientTLS.RootCAs = ca.MTLSConfig(t, "x").ClientTLS.RootCAs // trusts b; b does not trust it
	sysS, _ := startSystem(t, "stranger", strangerCfg)
	dlS := events[*actor.DeadLetterEvent](t, sysS)
	_, err = actor.Request[*EchoReply](ctxWait(t), sysS.Root(), remotePID(echoB), &Echo{Text: "let me in"})
	require.ErrorIs(t, err, remote.ErrPeerUnreachable)
	waitFor(t, dlS, "dead letter at the stranger", deadLetterWith(remote.ErrPeerUnreachable))
	waitFor(t, transportB, "b refuses the stranger", func(e *remote.Event) bool {
		return e.Kind == remote.EventHandshakeRefused && e.Inbound && errors.Is(e.Err, remote.ErrHandshake)
	})
}

// TestMemoryTransport: the same runtime over the in-memory network (an
// Install option), as the cluster tests use it.
func TestMemoryTransport(t *testing.T) {
	network := remote.NewMemoryNetwork()
	cfg := func(addr string) remote.Config {
		c := testConfig(t)
		c.ListenAddress = addr
		return c
	}
	sysA, _ := startSystem(t, "a", cfg("node-a:1"), remote.WithTransport(network))
	sysB, rb := startSystem(t, "b", cfg("node-b:1"), remote.WithTransport(network))
	require.Equal(t, "node-b:1", rb.Address())
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "mem"})
	require.NoError(t, err)
	assert.Equal(t, "mem", rep.Text)
}

// Two shapes registered under one name: what one side encodes, the other
// cannot decode.
type (
	shapeText struct{ X string }
	shapeNum  struct{ X int }
)

// TestUndecodablePayload: a registered type whose payload does not decode
// is a dead letter at the receiver (ErrMalformed), logged with an
// EventUnknownType event, and the sender's request fails at once (the dead
// letter answers a sender on another node). The connection stays up.
func TestUndecodablePayload(t *testing.T) {
	cfgA, cfgB := testConfig(t), testConfig(t)
	require.NoError(t, remote.RegisterJSON[*shapeText](cfgA.Serializers, "test.Shape"))
	require.NoError(t, remote.RegisterJSON[*shapeNum](cfgB.Serializers, "test.Shape"))
	sysA, _ := startSystem(t, "a", cfgA)
	sysB, rb := startSystem(t, "b", cfgB)
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	dlB := events[*actor.DeadLetterEvent](t, sysB)
	transportB := events[*remote.Event](t, sysB)

	_, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &shapeText{X: "not a number"})
	require.ErrorIs(t, err, actor.ErrDeadLetter, "answered at once, not at the timeout")
	e := waitFor(t, dlB, "dead letter at b", deadLetterWith(remote.ErrMalformed))
	assert.Equal(t, "echo", e.PID.ID)
	assert.Nil(t, e.Message)
	waitFor(t, transportB, "unknown-type event", func(e *remote.Event) bool { return e.Kind == remote.EventUnknownType })

	rep, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "still here"})
	require.NoError(t, err)
	assert.Equal(t, "still here", rep.Text)
	st := rb.Node().Stats()
	assert.Zero(t, st.ProtocolErrors)
	assert.EqualValues(t, 1, st.Connections)
}
