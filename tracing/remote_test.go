package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// Messages that cross nodes (JSON).
type (
	Hop    struct{ N int }
	HopAck struct{ N int }
)

func startRemote(t *testing.T, name string) *actor.System {
	t.Helper()
	cfg := remote.DefaultConfig()
	cfg.ListenAddress = "127.0.0.1:0"
	cfg.ReconnectBackoffMin, cfg.ReconnectBackoffMax = 5*time.Millisecond, 50*time.Millisecond
	ser := remote.NewSerializers()
	require.NoError(t, remote.RegisterJSON[*Hop](ser, "tracing.Hop"))
	require.NoError(t, remote.RegisterJSON[*HopAck](ser, "tracing.HopAck"))
	cfg.Serializers = ser
	return testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = name
		c.Extensions = []actor.ExtensionInstaller{remote.Install(cfg)}
	})
}

// Across two systems over loopback TCP: a request from a root span to an
// actor on A, which asks an actor on B, which answers: one trace, every
// receive span the child of the span that sent its message (the trace
// context crossed the wire both ways).
func TestRemoteHopIsOneTrace(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	sysA, sysB := startRemote(t, "a"), startRemote(t, "b")
	traced := func(f actor.ReceiveFunc) *actor.Props {
		return actor.PropsFromFunc(f, tr.WithReceiveSpans(), tr.WithPropagation())
	}
	onB := sysB.Root().Spawn(traced(func(c actor.Context) {
		if m, ok := c.Message().(*Hop); ok {
			c.Respond(&HopAck{N: m.N})
		}
	}))
	remoteB := actor.NewPID(onB.Address, onB.ID)
	var origin *actor.PID
	onA := sysA.Root().Spawn(traced(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *Hop:
			origin = c.Sender()
			c.Request(remoteB, &Hop{N: m.N + 1})
		case *HopAck:
			c.Send(origin, m)
		}
	}))
	done := make(chan struct{})
	sink := sysA.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*HopAck); ok {
			close(done)
		}
	}))
	root, span := tracer.Start(context.Background(), "http")
	sysA.Root().SendWithSender(onA, tr.Wrap(root, &Hop{N: 1}), sink)
	<-done
	span.End()
	shutdown(t, sysA)
	shutdown(t, sysB)

	id := span.SpanContext().TraceID()
	var hops []string
	for _, s := range rec.Ended() {
		require.Equal(t, id, s.SpanContext().TraceID(), "span %s in the one trace", s.Name())
		hops = append(hops, s.Name())
	}
	recvA, recvB, ackA := spanOf(t, rec, id, "receive *tracing_test.Hop", onA), spanOf(t, rec, id, "receive *tracing_test.Hop", onB), spanOf(t, rec, id, "receive *tracing_test.HopAck", onA)
	requireChild(t, span.SpanContext(), recvA)
	requireChild(t, recvA.SpanContext(), recvB)
	requireChild(t, recvB.SpanContext(), ackA)
	require.Len(t, hops, 4, "http, A, B, A's ack: %v", hops)
}
