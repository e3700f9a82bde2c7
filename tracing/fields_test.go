package tracing_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
	"github.com/fraktor-go/fraktor/tracing"
)

// spanCtx returns a context with a remote span context of trace id, with
// the W3C tracestate state ("" for none).
func spanCtx(t *testing.T, id byte, state string) (context.Context, trace.SpanContext) {
	t.Helper()
	ts, err := trace.ParseTraceState(state)
	require.NoError(t, err)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{id}, SpanID: trace.SpanID{id}, TraceFlags: trace.FlagsSampled, TraceState: ts, Remote: true})
	return trace.ContextWithSpanContext(context.Background(), sc), sc
}

// The trace fields of a header belong together: putting another trace
// context on a message that has one replaces them all, so a trace never
// carries the tracestate of another; the header's other fields stay.
func TestWrapReplacesEveryTraceField(t *testing.T) {
	tr := tracing.New(tracing.Config{})
	ctxA, _ := spanCtx(t, 1, "vendor=a")
	ctxB, scB := spanCtx(t, 2, "")
	first := tr.Wrap(ctxA, "m").(*actor.MessageEnvelope)
	require.Equal(t, "vendor=a", first.Header.Get("tracestate"))
	withApp := &actor.MessageEnvelope{Header: actor.Header{"x-app": "keep"}, Message: "m"}
	for k, v := range first.Header {
		withApp.Header[k] = v
	}

	again := tr.Wrap(ctxB, withApp).(*actor.MessageEnvelope)
	require.Equal(t, "m", again.Message)
	require.Contains(t, again.Header.Get("traceparent"), scB.TraceID().String())
	require.Empty(t, again.Header.Get("tracestate"), "trace B carries trace A's tracestate")
	require.Equal(t, "keep", again.Header.Get("x-app"))
}

// The same for WithPropagation: a message the actor wrapped itself goes
// with the trace context of the message being handled, whole.
func TestPropagationReplacesEveryTraceField(t *testing.T) {
	tr := tracing.New(tracing.Config{})
	ctxA, _ := spanCtx(t, 1, "vendor=a")
	ctxB, scB := spanCtx(t, 2, "")
	sys := testkit.NewSystem(t)
	got := make(chan actor.Header, 1)
	sink := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			got <- c.MessageHeader()
		}
	}))
	mid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*start); ok {
			c.Send(sink, tr.Wrap(ctxA, &start{}))
		}
	}, tr.WithPropagation()))
	sys.Root().Send(mid, tr.Wrap(ctxB, &start{}))
	h := <-got
	require.Contains(t, h.Get("traceparent"), scB.TraceID().String())
	require.Empty(t, h.Get("tracestate"), "trace B carries trace A's tracestate")
}
