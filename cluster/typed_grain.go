package cluster

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// GrainContext is the context a typed grain's methods get (the grains
// generated from .proto services by protoc-gen-fraktor-grain): the
// activation's actor.Context, valid for the call only, with the grain's
// identity at hand. IdentityOf, FencingTokenOf and Passivate work on it too.
type GrainContext interface {
	actor.Context
	// Identity returns the grain's identity.
	Identity() Identity
	// FencingToken returns this activation's fencing token (FencingTokenOf).
	FencingToken() FencingToken
	// Passivate stops this activation after the messages already queued
	// (Passivate).
	Passivate()
	// typed returns the runtime's context of the call. Being unexported,
	// it is implemented only by that context and by what embeds a
	// GrainContext: a grain's own wrapper (a struct embedding it, as a
	// tracing helper makes) has it promoted, so DeferReply, IdentityOf,
	// FencingTokenOf and Passivate see through the wrapper.
	typed() *typedContext
}

// GrainActivated is an optional interface of a typed grain: Activated runs
// when the activation starts, before its first request (a grain loads its
// state here). A non-nil error, like a panic, fails the activation: the
// caller that activated it gets *ActivationFailedError, not retried.
type GrainActivated interface {
	Activated(ctx GrainContext) error
}

// GrainDeactivating is an optional interface of a typed grain:
// Deactivating runs when the activation stops (passivation, handover,
// shutdown), after its last request; not when its Activated returned an
// error or panicked.
type GrainDeactivating interface {
	Deactivating(ctx GrainContext)
}

// GrainMessageReceiver is an optional interface of a typed grain:
// ReceiveMessage gets the messages that are none of the service's requests,
// such as the result of a client's future piped to the grain
// (AccountClient.DepositFuture(...).PipeTo(ctx.Self())), a Terminated, or
// a ReceiveTimeout. Without it such messages are dropped, and one sent as a
// request is answered with CodeUnimplemented.
type GrainMessageReceiver interface {
	ReceiveMessage(ctx GrainContext, msg any)
}

// ErrUnknownRequest is what a GrainServer's Dispatch reports for a message
// that is none of its service's requests.
var ErrUnknownRequest = errors.New("cluster: not a request of this grain")

// GrainServer is one activation of a typed grain as the runtime calls it.
// Generated code implements it around the user's grain; users do not.
type GrainServer interface {
	// Grain returns the user's grain, on which the runtime looks for the
	// optional interfaces (GrainActivated, GrainDeactivating,
	// GrainMessageReceiver).
	Grain() any
	// Dispatch calls the method whose request msg is and returns its
	// reply, or ErrUnknownRequest. It runs on the activation's invocation
	// (one at a time) and may panic (the user's method did).
	Dispatch(ctx GrainContext, msg any) (reply any, err error)
}

// NewGrainKind returns the kind name whose activations are typed grains:
// newServer makes one per activation (on the owner, when it activates; and
// again after a panic restarted it). msgs are the protobuf messages of the
// service, registered with the remote serializers of every member that
// hosts the kind. Generated code calls it (AccountKind); opts are
// NewKind's.
func NewGrainKind(name string, msgs *GrainMessages, newServer func(Identity) GrainServer, opts ...KindOption) Kind {
	k := NewKind(name, actor.PropsFromProducer(func() actor.Actor { return &typedGrain{newServer: newServer} }), opts...)
	k.messages = msgs
	return k
}

// typedGrain is the actor behind a typed grain: it makes the server at
// Started and turns each request into a Dispatch and its reply.
type typedGrain struct {
	newServer func(Identity) GrainServer
	srv       GrainServer
	ctx       typedContext
	pending   []*deferred // deferred replies not known to be sent (typed_defer.go)
	failed    bool        // Activated returned an error: no requests, no Deactivating
}

// typedContext is the GrainContext of a typed grain: the Context its
// Receive got (the grain's, which IdentityOf knows) and the identity.
type typedContext struct {
	actor.Context
	id       Identity
	deferred *deferred // the current request's reply, when DeferReply was called
	stashed  bool      // the current request was stashed (Stash)
}

// Stash stashes the current message (actor.Context's Stash) and, for a
// request, marks it as not handled on this turn: the runtime sends no reply
// for it now, neither the method's return values nor a reply it deferred
// (which goes nowhere and is not pending work), so that the request is
// answered once, when UnstashAll gives it to the method again
// (TestTypedGrainStashedRequestAnsweredOnce).
func (t *typedContext) Stash() {
	t.stashed = true
	t.Context.Stash()
}

func (t *typedContext) Identity() Identity { return t.id }

func (t *typedContext) FencingToken() FencingToken {
	tok, _ := FencingTokenOf(t.Context)
	return tok
}

func (t *typedContext) Passivate() { Passivate(t.Context) }

func (t *typedContext) typed() *typedContext { return t }

// untyped returns the Context the typedContext under ctx (a GrainContext,
// wrapped by the grain or not) carries, or ctx itself.
func untyped(ctx actor.Context) actor.Context {
	if g, ok := ctx.(GrainContext); ok {
		return g.typed().Context
	}
	return ctx
}

// activatedError: a typed grain's Activated hook returned err.
type activatedError struct {
	id  Identity
	err error
}

func (e *activatedError) Error() string {
	return fmt.Sprintf("cluster: grain %s: activated: %v", e.id, e.err)
}
func (e *activatedError) Unwrap() error { return e.err }

func (g *typedGrain) Receive(ctx actor.Context) {
	g.ctx.Context = ctx
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		g.ctx.id, _ = IdentityOf(ctx)
		g.srv = g.newServer(g.ctx.id)
		if h, ok := g.srv.Grain().(GrainActivated); ok {
			// Failed until Activated returns nil: one that panics fails the
			// activation as an error does, so the grain that never loaded
			// its state gets no Deactivating (which may store it) either.
			g.failed = true
			if err := h.Activated(&g.ctx); err == nil {
				g.failed = false
			} else {
				// The activation fails (V2.2): the caller gets
				// *ActivationFailedError and the grain is stopped, with no
				// Deactivating (it never served a request).
				aerr := &activatedError{id: g.ctx.id, err: err}
				if !failActivation(ctx, aerr) {
					ctx.Logger().Error("cluster: grain activation failed", "err", aerr)
					ctx.Stop(ctx.Self())
				}
			}
		}
	case *actor.Stopping:
		// Deferred: a panicking Deactivating must not leave the callers
		// of pending deferred replies waiting for their deadline. After
		// it: Deactivating may still send them.
		defer g.abandonDeferred()
		if h, ok := g.grain().(GrainDeactivating); ok && !g.failed {
			h.Deactivating(&g.ctx)
		}
	case *actor.Restarting:
		g.abandonDeferred()
	case *actor.Stopped:
	default:
		g.request(ctx, msg)
	}
}

func (g *typedGrain) grain() any {
	if g.srv == nil {
		return nil
	}
	return g.srv.Grain()
}

// request dispatches msg. A panic in the method answers the caller with
// CodeInternal at once and then fails the activation as the panic would
// have (supervised: the grain restarts).
func (g *typedGrain) request(ctx actor.Context, msg any) {
	if g.failed {
		if ctx.Sender() != nil {
			ctx.Respond(&clusterpb.GrainError{Code: CodeInternal, Message: fmt.Sprintf("grain %s: activation failed", g.ctx.id)})
		}
		return
	}
	if g.srv == nil {
		return
	}
	g.ctx.deferred, g.ctx.stashed = nil, false
	defer func() {
		if r := recover(); r != nil {
			if g.stashedTurn() {
				// Stashed before the panic: the request runs again after
				// the restart (the stash goes back ahead of the mailbox)
				// and is answered then, once
				// (TestTypedGrainStashThenPanicAnsweredOnce).
				panic(r)
			}
			internal := &clusterpb.GrainError{Code: CodeInternal, Message: wireText(fmt.Sprintf("grain %s panicked: %v", g.ctx.id, r))}
			if d := g.ctx.deferred; d != nil {
				g.ctx.deferred = nil
				d.send(internal)
			} else if ctx.Sender() != nil {
				ctx.Respond(internal)
			}
			panic(r)
		}
	}()
	reply, err := g.srv.Dispatch(&g.ctx, msg)
	if err == ErrUnknownRequest {
		g.receive(ctx, msg)
		return
	}
	if g.stashedTurn() {
		return
	}
	if d := g.ctx.deferred; d != nil {
		g.ctx.deferred = nil
		if err != nil {
			d.send(wireError(err))
		} else {
			g.keepDeferred(d)
		}
		return
	}
	switch {
	case ctx.Sender() == nil:
	case err == nil:
		ctx.Respond(checkedReply(g.ctx.id, reply))
	default:
		ctx.Respond(wireError(err))
	}
}

// stashedTurn reports whether the grain stashed the message of this turn;
// then the reply it deferred on this turn, if any, is dropped unsent (the
// message's next turn answers it).
func (g *typedGrain) stashedTurn() bool {
	if !g.ctx.stashed {
		return false
	}
	g.ctx.stashed = false
	if d := g.ctx.deferred; d != nil {
		g.ctx.deferred = nil
		d.drop()
	}
	return true
}

// receive hands msg, none of the service's requests, to the grain's
// ReceiveMessage; without one, a sender gets CodeUnimplemented. A reply
// ReceiveMessage deferred (msg came with a sender) is kept as a method's
// is, so it is abandoned when the activation stops before sending it.
func (g *typedGrain) receive(ctx actor.Context, msg any) {
	h, ok := g.srv.Grain().(GrainMessageReceiver)
	if !ok {
		if ctx.Sender() != nil {
			ctx.Respond(&clusterpb.GrainError{Code: CodeUnimplemented, Message: fmt.Sprintf("grain %s: no method takes %T", g.ctx.id, msg)})
		}
		return
	}
	h.ReceiveMessage(&g.ctx, msg)
	if g.stashedTurn() {
		return
	}
	if d := g.ctx.deferred; d != nil {
		g.ctx.deferred = nil
		g.keepDeferred(d)
	}
}

// wireError is grainErrorOf for an error a grain returned or replied,
// which may be a typed nil *GrainError (var ge *GrainError; return nil, ge:
// a non-nil error). It answers CodeUnknown for one: dereferencing it would
// panic (the caller would get CodeInternal and the grain restart; from
// DeferredReply.Reply on another goroutine, the process would die).
//
// The code and message are made fit for the wire (wireText): a protobuf
// string must be UTF-8, and the reply must fit in a remote frame; a reply
// that does not cannot be sent, and a caller on another member would wait
// for its deadline.
func wireError(err error) *clusterpb.GrainError {
	var ge *GrainError
	if errors.As(err, &ge) && ge == nil {
		return &clusterpb.GrainError{Code: CodeUnknown, Message: "nil *cluster.GrainError"}
	}
	w := grainErrorOf(err)
	w.Code, w.Message = wireText(w.Code), wireText(w.Message)
	return w
}

// maxWireText bounds the code and the message of a GrainError in bytes,
// so that the reply fits in the smallest remote frame (remote.MinFrameSize,
// 4 KiB) with its envelope.
const maxWireText = 1 << 10

// wireText returns s as valid UTF-8 (invalid bytes become U+FFFD), cut at
// a rune boundary to at most maxWireText bytes, the cut marked with "…".
func wireText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	if len(s) <= maxWireText {
		return s
	}
	const mark = "…"
	cut := maxWireText - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
