package actor

import (
	"fmt"
	"runtime/debug"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Actor is the behaviour of an actor: Receive handles one message at a time,
// never concurrently, with the message and its sender in c.
type Actor interface {
	Receive(c Context)
}

// ReceiveFunc adapts a function to Actor.
type ReceiveFunc func(c Context)

// Receive implements Actor.
func (f ReceiveFunc) Receive(c Context) { f(c) }

// Producer makes a fresh actor instance: at spawn and at every restart. A
// panic in it is the actor's failure, not the spawner's: the spawn
// succeeds, and the actor fails on its first turn with a *PanicError
// holding the producer's panic, which its supervisor handles as any other
// (a restart calls the producer again). It does not run for a spawn that
// is refused: a taken name (ErrNameExists), a stopped system.
type Producer func() Actor

// ReceiveMiddleware wraps the delivery of every message to Receive. It may
// hand next a Context of its own that wraps the one it was given (embedding
// it and overriding some methods); the actor then sees that Context.
type ReceiveMiddleware func(next ReceiveFunc) ReceiveFunc

// SendFunc sends msg to target with sender (may be nil) on behalf of c.
type SendFunc func(c Context, target *PID, msg any, sender *PID)

// SendMiddleware wraps every Send, Request and Forward an actor makes. It may
// hand next a Context of its own that wraps the one it was given.
type SendMiddleware func(next SendFunc) SendFunc

// Props says how to make an actor: its producer, mailbox, supervisor
// strategy for its children, middleware and dispatcher. Props are immutable
// and may be shared by any number of spawns.
//
// Actors that spawn children often make Props per spawn (with arguments
// captured by the function, as SkyNet's do), so Props without options are
// one 32-byte allocation: the options sit apart, in propsOptions, allocated
// by the first option. TestPropsSize pins it.
type Props struct {
	producer Producer                    // nil for PropsFromFunc
	fn       ReceiveFunc                 // PropsFromFunc's function (see newActor)
	km       atomic.Pointer[kindMetrics] // kind metrics of the last system that spawned with it
	opt      *propsOptions               // nil without options; read through o()
}

// propsOptions are the settings of Props that options set.
type propsOptions struct {
	supervisor SupervisorStrategy
	receiveMW  []ReceiveMiddleware
	sendMW     []SendMiddleware
	spawnMW    []SpawnMiddleware
	invokeMW   []func() scheduler.Middleware
	newQueue   func() mailbox.Queue[envelope]
	dispatcher scheduler.Dispatcher
	blocking   bool
	kind       string
}

// noOptions is what o() returns for Props without options. Read-only.
var noOptions propsOptions

// o returns p's options for reading.
func (p *Props) o() *propsOptions {
	if p.opt == nil {
		return &noOptions
	}
	return p.opt
}

// opts returns p's options for writing, allocating them on first use;
// options only, while a constructor applies them.
func (p *Props) opts() *propsOptions {
	if p.opt == nil {
		p.opt = &propsOptions{}
	}
	return p.opt
}

// PropsOption configures Props. Options are applied only by the
// constructors (PropsFromProducer, PropsFromFunc): Props cannot be changed
// once built.
type PropsOption interface{ applyProps(*Props) }

// propsOption adapts a function to PropsOption.
type propsOption func(*Props)

func (f propsOption) applyProps(p *Props) { f(p) }

// PropsFromProducer returns Props that make actors with p.
func PropsFromProducer(p Producer, opts ...PropsOption) *Props {
	props := &Props{producer: p}
	for _, o := range opts {
		if o != nil {
			o.applyProps(props)
		}
	}
	return props
}

// PropsFromFunc returns Props for an actor that is just a function.
func PropsFromFunc(f ReceiveFunc, opts ...PropsOption) *Props {
	props := &Props{fn: f}
	for _, o := range opts {
		if o != nil {
			o.applyProps(props)
		}
	}
	return props
}

// newActor makes an actor instance, at spawn and at every restart. A
// function actor is the function itself, held in the Props rather than in a
// producer closure that returns it: Props made per spawn (an actor that
// spawns children with Props capturing their arguments, as SkyNet's do)
// then cost one allocation less. A ReceiveFunc is one pointer, so making it
// an Actor allocates nothing. TestPropsFromFuncAllocs pins it. Props
// without a producer (PropsFromFunc) make the function. Props with
// neither (PropsFromProducer(nil), PropsFromFunc(nil)) make a startFailure
// with ErrNoActor: the actor's failure on its first turn, not a panic in
// Spawn. A producer that panics or returns nil is handled the same way (see
// produce).
func (p *Props) newActor() Actor {
	if p.producer == nil {
		if p.fn == nil {
			return &startFailure{err: fmt.Errorf("%w: the Props have no producer and no function", ErrNoActor)}
		}
		return p.fn
	}
	return p.produce()
}

// produce calls the producer. It runs inside Spawn, on the spawner's
// goroutine (a caller of the root context, which would die of a panic),
// and at each restart, so a panic in it is not let through: the instance
// is then a startFailure, which fails the actor on its first turn with the
// producer's panic, and the actor's supervisor decides as for any failure
// (TestProducerPanicIsFailure). A producer that returns nil makes a
// startFailure with ErrNoActor, so that the failure names it rather than
// a nil dereference in Receive (TestProducerReturningNilSaysSo).
func (p *Props) produce() (a Actor) {
	defer func() {
		if r := recover(); r != nil {
			a = &startFailure{err: &PanicError{Value: r, Stack: debug.Stack()}}
		}
	}()
	if a = p.producer(); a == nil {
		a = &startFailure{err: fmt.Errorf("%w: its producer returned nil", ErrNoActor)}
	}
	return a
}

// startFailure is the instance of an actor whose Props made no actor (the
// producer panicked or returned nil; there was no producer): every message
// but the stop and restart notices fails it again with err.
type startFailure struct{ err error }

// producerPanic is what a startFailure (and a failedMW, invoker.go) panics
// with: the recover takes its err (a *PanicError, or an ErrNoActor) as the
// failure instead of wrapping it in another PanicError.
type producerPanic struct{ err error }

func (f *startFailure) Receive(c Context) {
	switch c.Message().(type) {
	case *Stopping, *Stopped, *Restarting:
		return
	}
	panic(producerPanic{f.err})
}

// WithSupervisor sets the strategy this actor applies to its failed children.
func WithSupervisor(s SupervisorStrategy) PropsOption {
	return propsOption(func(p *Props) { p.opts().supervisor = s })
}

// WithReceiveMiddleware wraps every message delivery; the first middleware
// is the outermost. Each actor spawned with the Props builds its own chain,
// on its first message: a middleware is called once per actor (and may keep
// per-actor state); a panic while building or running the chain is the
// actor's failure.
func WithReceiveMiddleware(mw ...ReceiveMiddleware) PropsOption {
	return propsOption(func(p *Props) { p.opts().receiveMW = append(p.opts().receiveMW, mw...) })
}

// WithSendMiddleware wraps every send the actor makes; the first middleware
// is the outermost. As with WithReceiveMiddleware, each actor builds its own
// chain, on its first send.
func WithSendMiddleware(mw ...SendMiddleware) PropsOption {
	return propsOption(func(p *Props) { p.opts().sendMW = append(p.opts().sendMW, mw...) })
}

// WithInvokeMiddleware adds scheduler middleware around every invocation of
// the actor's mailbox (S3, S8). The factory is called once per spawned actor,
// so a middleware may keep per-actor state; one that returns nil adds
// nothing. A panic in BeforeInvoke or
// AfterInvoke is the actor's failure (its system messages still run, so it
// can be restarted or stopped); one in the factory makes the actor fail on
// every turn, as it keeps the middleware it was spawned with.
func WithInvokeMiddleware(factory func() scheduler.Middleware) PropsOption {
	return propsOption(func(p *Props) { p.opts().invokeMW = append(p.opts().invokeMW, factory) })
}

// WithBoundedMailbox gives the actor a mailbox of at most capacity user
// messages with the given overflow policy (its memory grows with what it
// holds). A message the policy leaves out (refused under mailbox.Reject,
// dropped under DropNewest or DropOldest) becomes a dead letter with
// ErrMailboxFull, and a request whose message it was fails with it. The
// actor's own ticks (its timers, its receive timeout, ReenterAfter
// callbacks) are neither refused nor dropped. A capacity below 1 is 1
// (a zero-valued config field gives a mailbox of one message).
func WithBoundedMailbox(capacity int, policy mailbox.Overflow) PropsOption {
	return propsOption(func(p *Props) {
		p.opts().newQueue = func() mailbox.Queue[envelope] { return mailbox.NewBounded[envelope](capacity, policy) }
	})
}

// Prioritized is implemented by messages that choose their priority level in
// a priority mailbox; others get level 0.
type Prioritized interface{ Priority() int }

// WithPriorityMailbox gives the actor a priority mailbox with the given
// number of levels (at most mailbox.MaxPriorityLevels); a message's level
// is its Priority() (higher first), or 0 when Priority panics.
func WithPriorityMailbox(levels int) PropsOption {
	return propsOption(func(p *Props) {
		p.opts().newQueue = func() mailbox.Queue[envelope] {
			return mailbox.NewPriority(levels, func(e envelope) int {
				msg, _ := UnwrapEnvelope(e.msg)
				if pm, ok := msg.(Prioritized); ok {
					return priorityOf(pm)
				}
				return 0
			})
		}
	})
}

// priorityOf returns m's Priority, or 0 when it panics: it runs inside the
// send, on the sender's goroutine (a root caller, another actor, a
// connection's reader), which must not fail for the message's bug
// (TestPriorityPanicIsLevelZero).
func priorityOf(m Prioritized) (level int) {
	defer func() {
		if recover() != nil {
			level = 0
		}
	}()
	return m.Priority()
}

// WithDispatcher runs the actor on d instead of the system's worker pool.
func WithDispatcher(d scheduler.Dispatcher) PropsOption {
	return propsOption(func(p *Props) { p.opts().dispatcher = d })
}

// WithKind names the actor's kind for metrics and logs (the attribute
// fraktor.actor.kind); without it the kind is the Go type of the instance.
// Keep the set of kinds small: it is a metric attribute.
func WithKind(name string) PropsOption { return propsOption(func(p *Props) { p.opts().kind = name }) }

// WithBlocking runs the actor on the system's dedicated pool for actors that
// block (I/O, cgo), so they never starve the shared workers.
func WithBlocking() PropsOption { return propsOption(func(p *Props) { p.opts().blocking = true }) }

// chains are an actor's middleware chains. The receive and send chains are
// built on first use; their innermost functions are bound to the actor's
// cell, so they use the Context they are handed only through the Context
// interface: a middleware may wrap it.
type chains struct {
	recv  ReceiveFunc       // nil without receive middleware, or before first use
	send  SendFunc          // nil without send middleware, or before first use
	spawn []SpawnMiddleware // the spawn chain: inherited, then the Props' own
	inv   *invokeMW         // nil without invoke middleware
	cur   Context           // the Context the actor's Receive was handed, while it runs
}

// chains returns c's middleware chains, building them on first use (on the
// actor's goroutine, inside the invocation, so a panicking middleware is a
// supervised failure).
func (c *cell) chains() *chains {
	// Called only for props with receive or send middleware: one of the
	// chains is set once they are built.
	ch := c.mw
	if ch != nil && (ch.recv != nil || ch.send != nil) {
		return ch
	}
	if ch == nil {
		ch = &chains{}
	}
	p := c.props.o()
	if len(p.receiveMW) > 0 {
		var recv ReceiveFunc = c.receiveTracked
		for i := len(p.receiveMW) - 1; i >= 0; i-- {
			recv = p.receiveMW[i](recv)
		}
		ch.recv = recv
	}
	if len(p.sendMW) > 0 {
		var send SendFunc = c.rawSend
		for i := len(p.sendMW) - 1; i >= 0; i-- {
			send = p.sendMW[i](send)
		}
		ch.send = send
	}
	if c.mw == nil {
		c.mw = ch // written only when nil: the metrics collector reads c.mw.inv (metrics.go)
	}
	return ch
}

func (p *Props) supervisorStrategy() SupervisorStrategy {
	if s := p.o().supervisor; s != nil {
		return s
	}
	return defaultStrategy
}

var defaultStrategy = DefaultStrategy()
