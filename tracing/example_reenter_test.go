package tracing_test

import (
	"context"
	"fmt"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/tracing"
)

// A ReenterAfter callback runs without a current message, so it has no
// trace context: what it sends is untraced unless it carries on the trace
// of the message that made the request. Keep ContextOf(c) in the closure
// and Wrap what the callback sends with it.
func ExampleTracing_ContextOf_reenterAfter() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tracing.New(tracing.Config{TracerProvider: tp})
	sys, _ := actor.NewSystem(actor.SystemConfig{})

	quota := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(int); ok {
			c.Respond(true)
		}
	}))
	done := make(chan struct{})
	worker := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(string); ok {
			close(done)
		}
	}, tr.WithReceiveSpans()))
	dispatcher := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if job, ok := c.Message().(string); ok {
			traced := tr.ContextOf(c) // the trace of the job, for the callback
			c.ReenterAfter(c.RequestFuture(quota, 1, time.Second), func(any, error) {
				c.Send(worker, tr.Wrap(traced, job)) // without Wrap: no trace, no span
			})
		}
	}, tr.WithPropagation(), tr.WithReceiveSpans()))

	ctx, span := tp.Tracer("client").Start(context.Background(), "submit")
	sys.Root().Send(dispatcher, tr.Wrap(ctx, "job-1"))
	span.End()
	<-done
	_ = sys.Shutdown(context.Background()) // every Receive has returned: its span ended

	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.SpanContext().TraceID() == span.SpanContext().TraceID())
	}
	// Unordered output:
	// submit true
	// receive string true
	// receive string true
}
