package tracing_test

import (
	"context"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/tracing"
)

type ping struct{}

// benchModes: tracing off (no middleware, bare messages); the middleware
// installed but the message carries no trace context; trace context
// propagated without spans; propagated with a span per receive (SDK
// provider, in-memory exporter that drops nothing).
var benchModes = []string{"off", "untraced", "propagate", "spans"}

func benchSetup(b *testing.B, mode string) (*actor.System, []actor.PropsOption, func(any) any) {
	b.Helper()
	sys, err := actor.NewSystem(actor.SystemConfig{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewNoopExporter()))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	tr := tracing.New(tracing.Config{TracerProvider: tp})
	ctx, span := tp.Tracer("bench").Start(context.Background(), "root")
	b.Cleanup(func() { span.End() })
	bare := func(m any) any { return m }
	wrap := func(m any) any { return tr.Wrap(ctx, m) }
	switch mode {
	case "off":
		return sys, nil, bare
	case "untraced":
		return sys, []actor.PropsOption{tr.WithReceiveSpans(), tr.WithPropagation()}, bare
	case "propagate":
		return sys, []actor.PropsOption{tr.WithPropagation()}, wrap
	default:
		return sys, []actor.PropsOption{tr.WithReceiveSpans(), tr.WithPropagation()}, wrap
	}
}

// BenchmarkTracingPingPong: actor↔actor round trip (two messages per op);
// the first message's trace context travels with every later one.
func BenchmarkTracingPingPong(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode, func(b *testing.B) {
			sys, opts, wrap := benchSetup(b, mode)
			done := make(chan struct{})
			msg := &ping{}
			echo := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if m, ok := c.Message().(*ping); ok {
					c.Respond(m)
				}
			}, opts...))
			n, target := 0, b.N
			pinger := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if _, ok := c.Message().(*ping); ok {
					if n++; n > target {
						close(done)
						return
					}
					c.Request(echo, msg)
				}
			}, opts...))
			b.ReportAllocs()
			b.ResetTimer()
			sys.Root().Send(pinger, wrap(msg))
			<-done
		})
	}
}

// BenchmarkTracingRequest: request/response from outside the system, the
// request wrapped with the caller's trace context when tracing is on.
func BenchmarkTracingRequest(b *testing.B) {
	for _, mode := range benchModes {
		b.Run(mode, func(b *testing.B) {
			sys, opts, wrap := benchSetup(b, mode)
			pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
				if m, ok := c.Message().(*ping); ok {
					c.Respond(m)
				}
			}, opts...))
			ctx := context.Background()
			msg := &ping{}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := actor.Request[*ping](ctx, sys.Root(), pid, wrap(msg)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
