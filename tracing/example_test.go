package tracing_test

import (
	"context"
	"fmt"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/tracing"
)

// A request from code that has a span (an HTTP handler, say) to an actor
// that opens a span per receive: the actor's span is a child of the
// caller's, in the same trace.
func Example() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tracing.New(tracing.Config{TracerProvider: tp})

	sys, _ := actor.NewSystem(actor.SystemConfig{})
	greeter := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if name, ok := c.Message().(string); ok {
			c.Respond("hello " + name)
		}
	}, tr.WithReceiveSpans(), tr.WithPropagation()))

	ctx, span := tp.Tracer("http").Start(context.Background(), "GET /greet")
	answer, _ := actor.Request[string](ctx, sys.Root(), greeter, tr.Wrap(ctx, "ada"))
	_ = sys.Shutdown(context.Background()) // every Receive has returned: its span ended
	span.End()

	fmt.Println(answer)
	for _, s := range rec.Ended() {
		fmt.Println(s.Name(), s.SpanContext().TraceID() == span.SpanContext().TraceID())
	}
	// Output:
	// hello ada
	// receive string true
	// GET /greet true
}
