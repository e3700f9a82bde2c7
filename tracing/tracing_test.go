package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
	"github.com/fraktor-go/fraktor/tracing"
)

type (
	start struct{}
	ask   struct{}
	reply struct{}
)

// A chain root span → A → B → (request) C → (reply) B: one trace, each
// receive span the child of the span that sent the message.
func TestLocalSendChainIsOneTrace(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	sys := testkit.NewSystem(t)
	done := make(chan struct{})
	traced := func(f actor.ReceiveFunc) *actor.Props {
		return actor.PropsFromFunc(f, tr.WithReceiveSpans(), tr.WithPropagation())
	}
	c := sys.Root().Spawn(traced(func(ctx actor.Context) {
		if _, ok := ctx.Message().(*ask); ok {
			ctx.Respond(&reply{})
		}
	}))
	b := sys.Root().Spawn(traced(func(ctx actor.Context) {
		switch ctx.Message().(type) {
		case *start:
			ctx.Request(c, &ask{})
		case *reply:
			close(done)
		}
	}))
	a := sys.Root().Spawn(traced(func(ctx actor.Context) {
		if _, ok := ctx.Message().(*start); ok {
			ctx.Send(b, &start{})
		}
	}))

	root, span := tracer.Start(context.Background(), "http")
	sys.Root().Send(a, tr.Wrap(root, &start{}))
	span.End()
	<-done
	shutdown(t, sys)

	id := span.SpanContext().TraceID()
	starts := rec.Ended()
	var recvA, recvB trace.SpanContext
	for _, s := range starts {
		if s.Name() == "receive *tracing_test.start" && s.Parent().SpanID() == span.SpanContext().SpanID() {
			recvA = s.SpanContext()
		}
	}
	require.True(t, recvA.IsValid(), "A's receive span")
	for _, s := range starts {
		if s.Name() == "receive *tracing_test.start" && s.Parent().SpanID() == recvA.SpanID() {
			recvB = s.SpanContext()
			requireChild(t, recvA, s)
		}
	}
	require.True(t, recvB.IsValid(), "B's receive span, child of A's")
	askSpan := spanNamed(t, rec, id, "receive *tracing_test.ask")
	requireChild(t, recvB, askSpan)
	requireChild(t, askSpan.SpanContext(), spanNamed(t, rec, id, "receive *tracing_test.reply"))
	require.Equal(t, trace.SpanKindConsumer, askSpan.SpanKind())
	for _, s := range rec.Ended() {
		require.Equal(t, id, s.SpanContext().TraceID(), "every span is in the one trace: %s", s.Name())
	}
	require.Len(t, rec.Ended(), 5) // http, A, B, C, B's reply
}

// Without receive spans the trace context still travels: the receiver sees
// the root span's context, unchanged through an intermediate actor.
func TestPropagationWithoutSpans(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	sys := testkit.NewSystem(t)
	got := make(chan context.Context, 1)
	sink := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			got <- tr.ContextOf(c)
		}
	}))
	mid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			c.Send(sink, &start{})
		}
	}, tr.WithPropagation()))
	root, span := tracer.Start(context.Background(), "root")
	sys.Root().Send(mid, tr.Wrap(root, &start{}))
	sc := trace.SpanContextFromContext(<-got)
	span.End()
	require.Equal(t, span.SpanContext().TraceID(), sc.TraceID())
	require.Equal(t, span.SpanContext().SpanID(), sc.SpanID())
	require.Len(t, rec.Ended(), 1, "no receive spans without WithReceiveSpans")
}

// Messages without trace context stay bare: no envelope, no span, and an
// actor that sends while handling them adds no header.
func TestNoTraceContextNoHeader(t *testing.T) {
	tr, rec, _ := newTracing(t)
	sys := testkit.NewSystem(t)
	got := make(chan actor.Header, 1)
	sink := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			got <- c.MessageHeader()
		}
	}))
	mid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			c.Send(sink, &start{})
		}
	}, tr.WithReceiveSpans(), tr.WithPropagation()))
	msg := &start{}
	require.Same(t, msg, tr.Wrap(context.Background(), msg), "Wrap without a span returns the message")
	sys.Root().Send(mid, msg)
	require.Nil(t, <-got)
	shutdown(t, sys)
	require.Empty(t, rec.Ended())
}

// A panic in Receive ends the receive span with an error status, and the
// actor fails and restarts as it would without tracing.
func TestReceiveSpanRecordsPanic(t *testing.T) {
	tr, rec, tracer := newTracing(t)
	sys := testkit.NewSystem(t)
	restarted := make(chan struct{})
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *start:
			panic("boom")
		case *actor.Restarting:
			close(restarted)
		}
	}, tr.WithReceiveSpans()))
	root, span := tracer.Start(context.Background(), "root")
	sys.Root().Send(pid, tr.Wrap(root, &start{}))
	<-restarted
	span.End()
	s := spanNamed(t, rec, span.SpanContext().TraceID(), "receive *tracing_test.start")
	require.Equal(t, codes.Error, s.Status().Code)
	require.Equal(t, "boom", s.Status().Description)
}

// The propagator passed in Config writes the header, not tracecontext.
func TestCustomPropagator(t *testing.T) {
	_, _, tracer := newTracing(t)
	tr := tracing.New(tracing.Config{Propagator: spanIDOnly{}})
	root, span := tracer.Start(context.Background(), "root")
	defer span.End()
	env, ok := tr.Wrap(root, "m").(*actor.MessageEnvelope)
	require.True(t, ok)
	require.Equal(t, "m", env.Message)
	require.Equal(t, actor.Header{"x-span": span.SpanContext().SpanID().String()}, env.Header)
}

// spanIDOnly is a propagator that writes only the span ID.
type spanIDOnly struct{}

func (spanIDOnly) Inject(ctx context.Context, c propagation.TextMapCarrier) {
	c.Set("x-span", trace.SpanContextFromContext(ctx).SpanID().String())
}
func (spanIDOnly) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (spanIDOnly) Fields() []string { return []string{"x-span"} }

// A ReenterAfter callback made while handling a traced message may use the
// Context it captured, as it may without WithReceiveSpans: the Context the
// span middleware hands Receive stays usable after Receive returns (it was
// emptied, and the callback's Send panicked).
func TestReenterAfterCallbackUsesTheTracedContext(t *testing.T) {
	tr, _, tracer := newTracing(t)
	sys := testkit.NewManualSystem(t)
	probe := testkit.NewManualProbe(t, sys)
	echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*ask); ok {
			c.Respond(&reply{})
		}
	}))
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			c.ReenterAfter(c.RequestFuture(echo, &ask{}, time.Minute), func(res any, err error) {
				c.Send(probe.PID(), res)
			})
		}
	}, tr.WithReceiveSpans()))
	root, span := tracer.Start(context.Background(), "root")
	defer span.End()
	sys.Root().Send(pid, tr.Wrap(root, &start{}))
	testkit.ExpectMsg[*reply](probe, 0)
	for _, r := range sys.TraceOf(pid) {
		require.NoError(t, r.Err, "the actor did not fail")
	}
}
