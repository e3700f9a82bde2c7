package tracing

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/fraktor-go/fraktor/actor"
)

// ScopeName is the instrumentation scope of the tracer that opens the
// receive spans.
const ScopeName = "github.com/fraktor-go/fraktor/tracing"

// Attribute keys of the receive spans.
const (
	AttrActorPID    = attribute.Key("fraktor.actor.pid")
	AttrMessageType = attribute.Key("fraktor.message.type")
)

// Config says where spans go and how trace context is written into a
// message's Header.
type Config struct {
	// TracerProvider makes the tracer of the receive spans; nil means a
	// no-op provider (trace context is still propagated).
	TracerProvider trace.TracerProvider
	// Propagator writes and reads the trace context in message headers;
	// nil means W3C tracecontext (propagation.TraceContext).
	Propagator propagation.TextMapPropagator
}

// Tracing propagates trace context with messages and opens receive spans.
// It is immutable and safe for concurrent use; one value serves any number
// of actors and systems.
type Tracing struct {
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
	// fields are the header keys prop writes (prop.Fields(), taken once).
	// They belong together: a header that gets another trace context loses
	// all of them first, so no field of the old one (a tracestate that the
	// new context lacks) stays beside the new ones.
	fields []string
}

// New returns a Tracing for cfg.
func New(cfg Config) *Tracing {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = noop.NewTracerProvider()
	}
	prop := cfg.Propagator
	if prop == nil {
		prop = propagation.TraceContext{}
	}
	return &Tracing{tracer: tp.Tracer(ScopeName), prop: prop, fields: prop.Fields()}
}

// Wrap returns msg with the trace context of ctx on it, in an
// actor.MessageEnvelope, or msg itself when ctx has no valid span context.
// Send the result like msg. The envelope must not change after it is sent.
func (t *Tracing) Wrap(ctx context.Context, msg any) any {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return msg
	}
	inner, h := actor.UnwrapEnvelope(msg)
	out := make(actor.Header, len(h)+2)
	for k, v := range h {
		out[k] = v
	}
	t.dropFields(out)
	t.prop.Inject(ctx, out)
	return &actor.MessageEnvelope{Header: out, Message: inner}
}

// ContextOf returns a context.Context carrying the trace context of the
// message c is handling (the receive span's, with WithReceiveSpans), based
// on context.Background; without one, context.Background itself.
func (t *Tracing) ContextOf(c actor.Context) context.Context {
	h := c.MessageHeader()
	if h == nil {
		return context.Background()
	}
	return t.prop.Extract(context.Background(), h)
}

// WithPropagation is a send middleware: every message the actor sends (Send,
// Request, RequestFuture, Respond, Forward) while it handles a message that
// carries a header goes with that header, so the trace continues at the
// receiver. With WithReceiveSpans, the header is the receive span's.
// Sending while handling a message without a header costs nothing more.
func (t *Tracing) WithPropagation() actor.PropsOption {
	return actor.WithSendMiddleware(t.propagate)
}

// dropFields deletes the propagator's fields from h.
func (t *Tracing) dropFields(h actor.Header) {
	for _, f := range t.fields {
		delete(h, f)
	}
}

func (t *Tracing) propagate(next actor.SendFunc) actor.SendFunc {
	return func(c actor.Context, target *actor.PID, msg any, sender *actor.PID) {
		h := c.MessageHeader()
		if h == nil {
			next(c, target, msg, sender)
			return
		}
		if e, ok := msg.(*actor.MessageEnvelope); ok && e != nil {
			// Already has a header (Forward keeps the one it came with):
			// the current trace context replaces its trace fields.
			out := make(actor.Header, len(e.Header)+len(h))
			for k, v := range e.Header {
				out[k] = v
			}
			t.dropFields(out)
			for k, v := range h {
				out[k] = v
			}
			next(c, target, &actor.MessageEnvelope{Header: out, Message: e.Message}, sender)
			return
		}
		// Headers never change once sent: the message's own header is
		// shared, not copied.
		next(c, target, &actor.MessageEnvelope{Header: h, Message: msg}, sender)
	}
}

// WithReceiveSpans is a receive middleware that opens a span (kind
// Consumer, named "receive <message type>") for every message that arrives
// with a valid trace context, as a child of it, and ends it when Receive
// returns; a panic in Receive marks the span as an error before the actor
// fails. Inside, the actor's Context.MessageHeader carries the span's
// context, so WithPropagation and ContextOf continue from the span. Lifecycle
// messages and messages without a trace context get no span.
func (t *Tracing) WithReceiveSpans() actor.PropsOption {
	return actor.WithReceiveMiddleware(t.receiveSpans)
}

// spanContext is the Context an actor gets inside a receive span; one per
// actor, reused for every message.
type spanContext struct {
	actor.Context
	h actor.Header
}

func (s *spanContext) MessageHeader() actor.Header { return s.h }

func (t *Tracing) receiveSpans(next actor.ReceiveFunc) actor.ReceiveFunc {
	w := &spanContext{}
	return func(c actor.Context) {
		h := c.MessageHeader()
		if h == nil {
			next(c)
			return
		}
		parent := t.prop.Extract(context.Background(), h)
		if !trace.SpanContextFromContext(parent).IsValid() {
			next(c)
			return
		}
		ctx, span := t.tracer.Start(parent, "receive "+typeName(c.Message()),
			trace.WithSpanKind(trace.SpanKindConsumer),
			trace.WithAttributes(AttrActorPID.String(c.Self().String()), AttrMessageType.String(typeName(c.Message()))))
		out := make(actor.Header, len(h))
		for k, v := range h {
			out[k] = v // baggage and other fields carry on
		}
		t.prop.Inject(ctx, out)
		w.Context, w.h = c, out
		defer func() {
			// The header only: Receive may have captured w for a
			// ReenterAfter callback, which runs later on the actor's turn
			// and must still reach the actor's Context (without a
			// header, as the callback's Context has none).
			w.h = nil
			if r := recover(); r != nil {
				span.SetStatus(codes.Error, fmt.Sprint(r))
				span.End()
				panic(r) // the actor's failure, as without the middleware
			}
			span.End()
		}()
		next(w)
	}
}

func typeName(msg any) string { return fmt.Sprintf("%T", msg) }
