package tracing_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/tracing"
)

const wait = 20 * time.Second

// newTracing returns a Tracing that records every ended span in memory.
func newTracing(t *testing.T) (*tracing.Tracing, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return tracing.New(tracing.Config{TracerProvider: tp}), rec, tp.Tracer("test")
}

// shutdown stops sys and waits for it: every Receive has returned, so every
// receive span has ended.
func shutdown(t *testing.T, sys *actor.System) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, sys.Shutdown(ctx))
}

// spanNamed returns the one ended span called name in trace id.
func spanNamed(t *testing.T, rec *tracetest.SpanRecorder, id trace.TraceID, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == name && s.SpanContext().TraceID() == id {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans named %q in trace %s", name, id)
	return found[0]
}

// requireChild checks that child's parent is parent, in the same trace.
func requireChild(t *testing.T, parent trace.SpanContext, child sdktrace.ReadOnlySpan) {
	t.Helper()
	require.Equal(t, parent.TraceID(), child.SpanContext().TraceID(), "%s: trace", child.Name())
	require.Equal(t, parent.SpanID(), child.Parent().SpanID(), "%s: parent", child.Name())
	require.True(t, child.Parent().IsRemote(), "%s: the parent came with the message", child.Name())
}

// spanOf returns the one ended span called name in trace id opened by the
// actor pid.
func spanOf(t *testing.T, rec *tracetest.SpanRecorder, id trace.TraceID, name string, pid *actor.PID) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() != name || s.SpanContext().TraceID() != id {
			continue
		}
		for _, kv := range s.Attributes() {
			if kv.Key == tracing.AttrActorPID && kv.Value.AsString() == pid.String() {
				found = append(found, s)
			}
		}
	}
	require.Len(t, found, 1, "spans named %q of %s in trace %s", name, pid, id)
	return found[0]
}
