package remote

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// inboundMsg is the user message of the inbound delivery tests.
type inboundMsg struct{ N int }

// inboundRig is a system with the Remote extension and frames from a
// fictitious peer delivered as a connection's reader delivers them
// (deliverBatch), without a socket.
type inboundRig struct {
	t    *testing.T
	sys  *actor.System
	r    *Remote
	enc  *envelopeEncoder
	dec  *envelopeDecoder
	from Peer
	dead chan *actor.DeadLetterEvent
}

func newInboundRig(t *testing.T) *inboundRig {
	t.Helper()
	ser := NewSerializers()
	require.NoError(t, RegisterJSON[*inboundMsg](ser, "test.inboundMsg"))
	cfg := testConfig()
	cfg.Serializers = ser
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "rx", Extensions: []actor.ExtensionInstaller{Install(cfg)}})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
		defer cancel()
		require.NoError(t, sys.Shutdown(ctx))
	})
	const peer = "10.9.9.9:1"
	g := &inboundRig{
		t: t, sys: sys, r: Get(sys),
		from: Peer{Address: peer, NodeID: "peer"},
		dead: make(chan *actor.DeadLetterEvent, 64),
	}
	// The reader hands decoded envelopes to the extension directly, not
	// through the Deliver hook (Remote.deliverInbound).
	g.r.node.hooks.Deliver = nil
	g.enc = newEnvelopeEncoder(peer, g.r.Address())
	g.dec = newEnvelopeDecoder(g.r.Address(), peer)
	actor.Subscribe(sys.EventStream(), func(e *actor.DeadLetterEvent) { g.dead <- e })
	return g
}

// spawn starts an actor named name that passes the N of each inboundMsg
// it receives to the returned channel.
func (g *inboundRig) spawn(name string) (*actor.PID, <-chan int) {
	g.t.Helper()
	got := make(chan int, 64)
	pid, err := g.sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*inboundMsg); ok {
			got <- m.N
		}
	}), name)
	require.NoError(g.t, err)
	return pid, got
}

// deliver delivers one frame of user messages, envelope i to targets[i]
// carrying N = ns[i].
func (g *inboundRig) deliver(targets []string, ns []int) {
	g.t.Helper()
	var body []byte
	for i, id := range targets {
		codec, err := g.r.Serializers().codecFor(&inboundMsg{})
		require.NoError(g.t, err)
		payload, err := codec.encode(nil, &inboundMsg{N: ns[i]})
		require.NoError(g.t, err)
		body = g.enc.append(body, &wireEnvelope{
			target: PIDRef{g.r.Address(), id}, serializer: codec.ser, typeName: codec.name, payload: payload,
		})
	}
	require.NoError(g.t, g.r.node.deliverBatch(g.from, g.dec, body))
}

// cachedTargets counts the target cache's entries.
func (g *inboundRig) cachedTargets() int {
	n := 0
	for i := range g.r.targets.slots {
		if g.r.targets.slots[i].Load() != nil {
			n++
		}
	}
	return n
}

func recvN(t *testing.T, ch <-chan int) int {
	t.Helper()
	select {
	case n := <-ch:
		return n
	case <-time.After(waitTimeout):
		t.Fatal("no message")
		return 0
	}
}

// TestDeliverInboundTargetMemo pins the connection's last target
// (envelopeDecoder.target, Remote.deliverInbound): a run of envelopes to
// one actor resolves it once, not through the target cache per envelope;
// an envelope to another name or to a missing process does not reuse it;
// and an actor that stopped is not reused, so its name's new owner gets
// what comes next.
func TestDeliverInboundTargetMemo(t *testing.T) {
	g := newInboundRig(t)
	a1, gotA1 := g.spawn("a")
	_, gotB := g.spawn("b")

	g.deliver([]string{"a"}, []int{1})
	assert.Equal(t, 1, recvN(t, gotA1))
	require.NotNil(t, g.dec.target)
	assert.Equal(t, "a", g.dec.target.pid.ID)

	// The run goes on without the target cache: emptied, it stays empty.
	g.r.targets = targetCache{}
	g.r.targets.init()
	g.deliver([]string{"a", "a"}, []int{2, 3})
	assert.Equal(t, 2, recvN(t, gotA1))
	assert.Equal(t, 3, recvN(t, gotA1))
	assert.Zero(t, g.cachedTargets(), "a run to one target resolves it from the connection's last target")

	// Another target, a missing one, then the first again: in order, the
	// missing one a dead letter.
	g.deliver([]string{"b", "missing", "a"}, []int{4, 5, 6})
	assert.Equal(t, 4, recvN(t, gotB))
	assert.Equal(t, 6, recvN(t, gotA1))
	select {
	case d := <-g.dead:
		assert.Equal(t, "missing", d.PID.ID)
		assert.Equal(t, &inboundMsg{N: 5}, d.Message)
	case <-time.After(waitTimeout):
		t.Fatal("no dead letter for the missing target")
	}
	assert.Equal(t, 2, g.cachedTargets())

	// The name's new owner gets the next envelope, not the stopped actor.
	g.deliver([]string{"a"}, []int{7})
	assert.Equal(t, 7, recvN(t, gotA1))
	require.NoError(t, g.sys.Root().StopFuture(a1).Wait())
	_, gotA2 := g.spawn("a")
	g.deliver([]string{"a"}, []int{8})
	assert.Equal(t, 8, recvN(t, gotA2))
	select {
	case d := <-g.dead:
		t.Fatalf("unexpected dead letter %v", d)
	default:
	}
}

// TestDeliverInboundRuns: the reader's run (actor.UserRun) keeps the
// order of a connection's envelopes across targets, and is posted before
// a refused envelope's Undelivered and at the end of each frame.
func TestDeliverInboundRuns(t *testing.T) {
	g := newInboundRig(t)
	_, gotP := g.spawn("p")
	_, gotQ := g.spawn("q")

	g.deliver([]string{"p", "p", "p", "q", "p", "p"}, []int{1, 2, 3, 4, 5, 6})
	for _, want := range []int{1, 2, 3, 5, 6} {
		assert.Equal(t, want, recvN(t, gotP))
	}
	assert.Equal(t, 4, recvN(t, gotQ))

	const long = 3*64 + 5 // several runs' worth
	targets, ns := make([]string, long), make([]int, long)
	for i := range targets {
		targets[i], ns[i] = "p", i
	}
	g.deliver(targets, ns)
	for _, want := range ns {
		require.Equal(t, want, recvN(t, gotP))
	}

	// An envelope whose type this node does not know: the run before it
	// is posted before the refusal is reported.
	g.r.node.hooks.Undelivered = func(u Undelivered) {
		assert.Equal(t, "test.unknown", u.TypeName)
		assert.Equal(t, 10, recvN(t, gotP))
		assert.Equal(t, 11, recvN(t, gotP))
	}
	var body []byte
	codec, err := g.r.Serializers().codecFor(&inboundMsg{})
	require.NoError(t, err)
	for i, typeName := range []string{codec.name, codec.name, "test.unknown", codec.name} {
		payload, err := codec.encode(nil, &inboundMsg{N: 10 + i})
		require.NoError(t, err)
		body = g.enc.append(body, &wireEnvelope{target: PIDRef{g.r.Address(), "p"}, serializer: codec.ser, typeName: typeName, payload: payload})
	}
	require.NoError(t, g.r.node.deliverBatch(g.from, g.dec, body))
	assert.Equal(t, 13, recvN(t, gotP))
}
