package tracing_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/tracing"
)

type (
	Lookup  struct{ Device string }
	Located struct{ Floor int }
)

// Akka has no built-in trace propagation (Kamon or Lightbend Telemetry add
// it); here one trace covers an HTTP handler, an actor on node A and an
// actor on node B over loopback TCP: the trace context travels in the
// message's header, across the wire too, and each receive span is the
// child of the span that sent its message.
func ExampleTracing_WithPropagation_akkaRemoteHop() {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tracing.New(tracing.Config{TracerProvider: tp})
	newNode := func() *actor.System {
		ser := remote.NewSerializers()
		_ = remote.RegisterJSON[*Lookup](ser, "iot.Lookup")
		_ = remote.RegisterJSON[*Located](ser, "iot.Located")
		cfg := remote.DefaultConfig()
		cfg.ListenAddress = "127.0.0.1:0"
		cfg.Serializers = ser
		sys, err := actor.NewSystem(actor.SystemConfig{Extensions: []actor.ExtensionInstaller{remote.Install(cfg)}})
		if err != nil {
			panic(err)
		}
		return sys
	}
	a, b := newNode(), newNode()
	traced := func(f actor.ReceiveFunc) *actor.Props {
		return actor.PropsFromFunc(f, tr.WithPropagation(), tr.WithReceiveSpans())
	}
	registry, _ := b.Root().SpawnNamed(traced(func(c actor.Context) {
		if _, ok := c.Message().(*Lookup); ok {
			c.Respond(&Located{Floor: 3})
		}
	}), "registry")
	remoteRegistry := actor.NewPID(b.Address(), registry.ID) // as A knows it
	frontend := a.Root().Spawn(traced(func(c actor.Context) {
		if _, ok := c.Message().(*Lookup); ok {
			c.Forward(remoteRegistry) // the caller's future gets B's answer
		}
	}))

	ctx, span := tp.Tracer("http").Start(context.Background(), "GET /devices/42")
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	loc, err := actor.Request[*Located](rctx, a.Root(), frontend, tr.Wrap(ctx, &Lookup{Device: "42"}))
	cancel()
	span.End()
	_ = a.Shutdown(context.Background())
	_ = b.Shutdown(context.Background()) // every Receive has returned: its span ended
	fmt.Println("floor", loc.Floor, err)

	parentOf := map[string]string{}
	names := map[string]string{}
	for _, s := range rec.Ended() {
		names[s.SpanContext().SpanID().String()] = s.Name()
	}
	for _, s := range rec.Ended() {
		parentOf[s.Name()+onNode(s, a, b)] = names[s.Parent().SpanID().String()]
		if s.SpanContext().TraceID() != span.SpanContext().TraceID() {
			fmt.Println("another trace:", s.Name())
		}
	}
	fmt.Println("A's receive, child of:", parentOf["receive *tracing_test.Lookup on A"])
	fmt.Println("B's receive, child of:", parentOf["receive *tracing_test.Lookup on B"]+" on A")
	// Output:
	// floor 3 <nil>
	// A's receive, child of: GET /devices/42
	// B's receive, child of: receive *tracing_test.Lookup on A
}

// onNode names the node whose actor recorded s.
func onNode(s sdktrace.ReadOnlySpan, a, b *actor.System) string {
	for _, kv := range s.Attributes() {
		if kv.Key == "fraktor.actor.pid" {
			switch v := kv.Value.AsString(); {
			case strings.HasPrefix(v, a.Address()+"/"):
				return " on A"
			case strings.HasPrefix(v, b.Address()+"/"):
				return " on B"
			}
		}
	}
	return ""
}
