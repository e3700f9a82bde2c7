// Package tracing carries OpenTelemetry trace context with messages: from a
// context.Context to an actor, from actor to actor, across nodes (remote)
// and through cluster requests to grains, so that one request shows as one
// trace.
//
// It uses the OpenTelemetry trace API with the TracerProvider and the
// propagator the application passes (W3C tracecontext by default); nothing
// global. The trace context rides in an actor.MessageEnvelope's Header,
// which exists only for messages that carry one: an actor without the
// middleware, and a message without a trace context, cost nothing more.
//
//   - Wrap puts the span context of a context.Context on a message (an HTTP
//     handler's request span, for example) for RootContext.Send,
//     RequestFuture, actor.Request or cluster.Request.
//   - WithPropagation (a send middleware) puts the trace context of the
//     message an actor is handling on every message it sends while
//     handling it.
//   - WithReceiveSpans (a receive middleware, opt-in) opens a span for every
//     message that arrives with a trace context; what the actor sends while
//     handling it is a child of that span when WithPropagation is there too.
//   - ContextOf gives actor code a context.Context with the current trace
//     context, to start its own spans or call out (a grain calling another
//     grain through cluster.Request uses Wrap(ContextOf(c), msg)). A
//     ReenterAfter callback has no current message and so no trace context:
//     keep ContextOf(c) from Receive in the closure and Wrap what the
//     callback sends with it.
package tracing
