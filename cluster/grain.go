package cluster

import (
	"fmt"
	"slices"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// grainMiddleware is the receive middleware of every grain, one per grain
// (the runtime builds an actor's chain at its first message). It finds the
// grain's activation once, at that first message, and hands the grain's
// Receive a grainContext that carries it, so IdentityOf, FencingTokenOf and
// Passivate need no lookup. On every message it marks the activation active
// for passivation (L4); after the Started handler returned it reports to
// the placement actor (a panic there is an activation failure, V2.2).
type grainMiddleware struct {
	next actor.ReceiveFunc
	ctx  grainContext
}

// grainContext is the Context a grain's Receive gets: the one its
// middleware was given, with the grain's activation.
type grainContext struct {
	actor.Context
	a        *activation
	c        *Cluster
	startErr error // set by failActivation during the Started handler
	// conts counts this incarnation's ReenterAfter continuations as the
	// activation's pending work (set with a).
	conts continuations
	// passivate: Passivate was called on this turn; the middleware asks
	// the placement actor after the turn (receive).
	passivate bool
}

// ReenterAfter is the Context's ReenterAfter, with the continuation counted
// as the grain's pending work until it has run: an activation waiting for
// it is not idle (WithIdleTimeout). A restart drops the continuations that
// have not run (actor.Context.ReenterAfter), and their count with them.
func (g *grainContext) ReenterAfter(fut *actor.Future, fn func(res any, err error)) {
	g.conts.reenterAfter(g.Context, fut, fn)
}

// pendingCounter counts the work a grain waits for (a deferred reply it
// has yet to send, a continuation yet to run), which keeps it from idle
// passivation: its activation in a cluster, a standalone grain's onWork
// (Kind.StandalonePropsWithWork). beginWait and endWait may be called on
// any goroutine: a deferred reply is sent from any.
type pendingCounter interface {
	beginWait()
	endWait()
	// dropWaits ends n pieces at once (the continuations a restart drops).
	dropWaits(n int32)
}

// dropWaits ends n pieces of work beginWait recorded: the continuations
// of an incarnation that restarted, which never run. The restart, a
// message, marked the activation active already.
func (a *activation) dropWaits(n int32) { a.pending.Add(-n) }

// continuations counts one grain's ReenterAfter continuations that have
// not run as pending work of w; n and gen belong to the grain's turn. Both
// grain Contexts (grainContext, standaloneGrain) count through it.
type continuations struct {
	w   pendingCounter // nil: not counted
	n   int32          // this incarnation's continuations that have not run
	gen uint32         // restarts, which drop them (drop)
}

// reenterAfter is ctx.ReenterAfter with fn counted until it has run.
func (c *continuations) reenterAfter(ctx actor.Context, fut *actor.Future, fn func(res any, err error)) {
	w := c.w
	if fut == nil || fn == nil || w == nil {
		ctx.ReenterAfter(fut, fn)
		return
	}
	w.beginWait()
	c.n++
	gen := c.gen
	ctx.ReenterAfter(fut, func(res any, err error) {
		// On the grain's turn, as c's fields. Ended after fn, which may
		// wait for more (a panic in fn ends it too).
		defer func() {
			if c.gen == gen {
				c.n--
				w.endWait()
			}
		}()
		fn(res, err)
	})
}

// drop forgets the continuations of an incarnation that is restarting:
// the runtime drops them without running them.
func (c *continuations) drop() {
	if c.w != nil && c.n != 0 {
		c.w.dropWaits(c.n)
	}
	c.n = 0
	c.gen++
}

func (c *Cluster) newGrainMiddleware(next actor.ReceiveFunc) actor.ReceiveFunc {
	g := &grainMiddleware{next: next, ctx: grainContext{c: c}}
	return g.receive
}

func (g *grainMiddleware) receive(ctx actor.Context) {
	a := g.ctx.a
	if a == nil {
		if a = g.ctx.c.pa.activationOf(ctx.Self()); a == nil {
			// Not an activation the placement actor knows (it was
			// forgotten already): run the grain without one.
			g.next(ctx)
			return
		}
		g.ctx.a = a
		g.ctx.conts.w = a
	}
	a.touch()
	c := g.ctx.c
	if c.pastFence(ctx.Message()) {
		// The member's lease is not guaranteed past the stop budget: the
		// grain handles nothing more (the placement actor stops it at its
		// next tick, which may come late after a stall). A requester's
		// future fails at once as for a dead letter and retries elsewhere.
		// A Send, which has nobody to answer, is a dead letter with the
		// reason, so that its drop is seen: the grain can take messages
		// between the fence time and its stop, since the tick that stops
		// it is a message to the placement actor, handled a moment later,
		// and the grain's Stop then waits for the turn it is in
		// (TestClusterSendPastFenceIsDeadLetter).
		if ctx.Sender() != nil {
			ctx.Respond(&actor.DeadLetterResponse{Target: ctx.Self()})
		} else {
			c.sys.DeadLetter(ctx.Self(), ctx.Message(), nil, errPastFence)
		}
		return
	}
	if _, ok := ctx.Message().(*actor.Stopped); ok {
		// Marked when the handler returns or panics: the placement actor
		// answers BUSY from then on (a grain past Stopped leads nowhere,
		// and one that panicked there is as gone).
		defer func() {
			at := c.now()
			a.stoppedAt.Store(&at)
		}()
	}
	if _, ok := ctx.Message().(*actor.Restarting); ok {
		// After the handler, even one that panics: the continuations of
		// the failed incarnation (its handler's included) never run.
		defer g.ctx.conts.drop()
	}
	g.ctx.Context = ctx
	g.next(&g.ctx)
	if g.ctx.passivate {
		// After the turn, so that what the turn sent to the grain itself
		// is queued ahead of the placement actor's pill and reaches this
		// activation, as under Kind.StandaloneProps
		// (TestDiffSendsAfterPassivate). A turn that panicked asks after
		// the next turn it completes.
		g.ctx.passivate = false
		c.passivateAfterSends(a.id, ctx.Self())
	}
	switch ctx.Message().(type) {
	case *actor.Started:
		if err := g.ctx.startErr; err != nil {
			g.ctx.startErr = nil
			// As the supervisor reports a panicking Started handler.
			c.root.Send(c.placement, &grainFailed{pid: ctx.Self(), err: fmt.Errorf("%w: %s: %w", ErrActivationFailed, a.id, err)})
			return
		}
		a.marks.Or(markStarted)
		c.root.Send(c.placement, &grainReady{pid: ctx.Self()})
	}
}

// failActivation, called from a grain's Started handler, fails the
// activation with err without a panic: the caller that activated it gets
// *ActivationFailedError (V2.2) and the grain is stopped; a standalone
// grain's (Kind.StandaloneProps) is stopped and reported to its onFailed.
// It reports false when ctx is neither's, or not in its Started handler.
func failActivation(ctx actor.Context, err error) bool {
	ctx = untyped(ctx)
	if s, ok := ctx.(*standaloneGrain); ok && s.startErr != nil {
		*s.startErr = err
		return true
	}
	g, ok := ctx.(*grainContext)
	if !ok || g.a == nil {
		return false
	}
	g.startErr = err
	return true
}

// errPastFence is the reason of the dead letter a Send becomes when its
// grain would handle it past the member's fence time (pastFence).
var errPastFence = fmt.Errorf("%w: the grain's member is past its fence time", errFenced)

// pastFence reports whether msg, a user message, arrives after the
// member's fence time. Lifecycle messages always pass.
func (c *Cluster) pastFence(msg any) bool {
	switch msg.(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return false
	}
	at := c.fenceAt.Load()
	if at == 0 {
		return false
	}
	now := c.now()
	if now.UnixNano() < at {
		return false
	}
	return at == 1 || !c.renewedFence(at, now)
}

// renewedFence looks at the lease again once the fence time the placement
// actor published (at) has come, and reports whether a renewal since has
// moved it past now; then it publishes the new one. The placement actor
// publishes at its ticks and the membership's lease events, so it can lag
// behind the lease: its worker busy elsewhere, or a virtual clock moved
// across several renewals in one step while the renewals ran inside that
// step and the placement actor's messages waited. Then a grain dropped
// messages as past the fence time (a timer's tick, a Send: dead letters)
// while the member never fenced and went on serving it, so the grain ran
// on without them (TestClusterGrainPastStaleFenceTimeTakesRenewedLease).
// The lease is what the placement actor reads too, with the same
// condition (leaseOK): a grain that handles a message before the renewed
// lease's deadline − S is as safe as one whose placement actor had caught
// up. A fenced member (at 1) is not looked at again: only its rejoin ends
// that.
func (c *Cluster) renewedFence(at int64, now time.Time) bool {
	mb := c.membership.Load()
	if mb == nil || mb.m == nil {
		return false
	}
	l := mb.m.Lease()
	if !l.Valid(now.Add(c.cfg.StopBudget)) {
		return false
	}
	c.fenceAt.CompareAndSwap(at, l.Deadline.Add(-c.cfg.StopBudget).UnixNano())
	return true
}

// activationOf returns the activation behind a grain's context, or nil.
func activationOf(ctx actor.Context) *activation {
	if g, ok := ctx.(*grainContext); ok {
		return g.a
	}
	return nil
}

// pendingOf returns what counts the pending work of the grain whose
// Context ctx is (its activation, or a standalone grain's onWork), or nil
// when nothing does.
func pendingOf(ctx actor.Context) pendingCounter {
	switch c := ctx.(type) {
	case *grainContext:
		if c.a != nil {
			return c.a
		}
	case *standaloneGrain:
		return c.conts.w
	}
	return nil
}

// standaloneGrain is the Context a grain spawned from Kind.StandaloneProps
// receives: it answers IdentityOf and FencingTokenOf without a cluster.
type standaloneGrain struct {
	actor.Context
	id    Identity
	token FencingToken
	// conts, shared by the grain's turns, counts its continuations for
	// the onWork of StandalonePropsWithWork.
	conts *continuations
	// startErr, during the Started handler only, is where failActivation
	// records why the activation failed.
	startErr *error
	// passivate: Passivate was called on this turn; the grain is
	// poisoned after it (StandaloneProps).
	passivate bool
}

// ReenterAfter is the Context's ReenterAfter, with the continuation counted
// as the grain's pending work until it has run, as in a cluster
// (grainContext.ReenterAfter), when the grain reports it
// (StandalonePropsWithWork).
func (s *standaloneGrain) ReenterAfter(fut *actor.Future, fn func(res any, err error)) {
	s.conts.reenterAfter(s.Context, fut, fn)
}

// workFunc is the pendingCounter of a standalone grain: the onWork of
// Kind.StandalonePropsWithWork, told of each change of the count.
type workFunc func(delta int)

func (f workFunc) beginWait()        { f(1) }
func (f workFunc) endWait()          { f(-1) }
func (f workFunc) dropWaits(n int32) { f(-int(n)) }

// StandaloneProps returns the kind's props for running one activation
// outside a cluster, as a unit test does (testkit.NewGrain): the grain's
// Context answers IdentityOf with id and FencingTokenOf with token, and
// Passivate poisons the grain. An activation that fails without a panic (a
// typed grain's Activated returning an error) is stopped; onFailed, when
// given, is called on the grain's turn, before the stop, with the error a
// caller in the cluster would get the text of (without it the error is
// logged). The kind's own receive middleware stays outermost; the grain's
// Receive gets the answering Context. Its pending work is not counted
// (StandalonePropsWithWork).
func (k Kind) StandaloneProps(id Identity, token FencingToken, onFailed ...func(error)) *actor.Props {
	return k.StandalonePropsWithWork(id, token, nil, onFailed...)
}

// StandalonePropsWithWork is StandaloneProps that also reports the
// activation's pending work, for testkit.NewGrain, which emulates the
// kind's idle timeout outside a cluster: in a cluster a grain that waits
// is not idle, and its idle clock starts when the last of its pending
// work ends (WithIdleTimeout). onWork, when not nil, is called with +1
// when the grain begins to wait for a piece of work (DeferReply in a
// typed grain's method or ReceiveMessage; ReenterAfter called on the
// Context its Receive was given) and with -1 when it ends (the deferred
// reply sent or abandoned, the continuation run); a restart drops the
// continuations that have not run, -n for n of them. It is called on the
// grain's turn, except for a deferred reply sent from another goroutine;
// it must not block nor call into the grain. Spawn one activation from
// the props: every actor spawned from them reports to the same onWork.
func (k Kind) StandalonePropsWithWork(id Identity, token FencingToken, onWork func(delta int), onFailed ...func(error)) *actor.Props {
	return k.props.With(actor.WithReceiveMiddleware(func(next actor.ReceiveFunc) actor.ReceiveFunc {
		// One per grain, as the chain (built at its first message).
		conts := &continuations{}
		if onWork != nil {
			conts.w = workFunc(onWork)
		}
		return func(ctx actor.Context) {
			if _, ok := ctx.Message().(*actor.Restarting); ok {
				// After the handler, even one that panics: the failed
				// incarnation's continuations never run.
				defer conts.drop()
			}
			if _, ok := ctx.Message().(*actor.Started); !ok {
				s := &standaloneGrain{Context: ctx, id: id, token: token, conts: conts}
				next(s)
				s.passivateAfterTurn()
				return
			}
			var failed error
			s := &standaloneGrain{Context: ctx, id: id, token: token, conts: conts, startErr: &failed}
			next(s)
			if failed == nil {
				s.passivateAfterTurn()
				return
			}
			err := fmt.Errorf("%w: %s: %w", ErrActivationFailed, id, failed)
			if !slices.ContainsFunc(onFailed, func(f func(error)) bool { return f != nil }) {
				ctx.Logger().Error("cluster: grain activation failed", "err", err)
			}
			for _, f := range onFailed {
				if f != nil {
					f(err)
				}
			}
			ctx.Stop(ctx.Self())
		}
	}))
}

// passivateAfterTurn poisons the grain when Passivate was called on the
// turn that just ended: what the turn sent to the grain itself is queued
// ahead of the pill, as in a cluster (grainMiddleware.receive).
func (s *standaloneGrain) passivateAfterTurn() {
	if s.passivate {
		s.Poison(s.Self())
	}
}

// IdentityOf returns the Identity of the grain whose Context ctx is, and
// false when ctx is not a grain's: an ordinary actor's, or a Context the
// grain's Receive was not given (the kind's own receive middleware sees
// the Context before the grain's is made).
func IdentityOf(ctx actor.Context) (Identity, bool) {
	ctx = untyped(ctx)
	if s, ok := ctx.(*standaloneGrain); ok {
		return s.id, true
	}
	if a := activationOf(ctx); a != nil {
		return a.id, true
	}
	return Identity{}, false
}

// FencingTokenOf returns the fencing token of this activation: storage that
// keeps the greatest token it has seen per identity and refuses writes with
// a smaller one never accepts a write from a stale activation. The zero
// token (false) when ctx is not a grain's (as for IdentityOf).
func FencingTokenOf(ctx actor.Context) (FencingToken, bool) {
	ctx = untyped(ctx)
	if s, ok := ctx.(*standaloneGrain); ok {
		return s.token, true
	}
	if a := activationOf(ctx); a != nil {
		return a.token, true
	}
	return FencingToken{}, false
}

// Passivate stops the grain whose Context ctx is after the current turn
// and the messages queued by then, those this turn sends to the grain
// itself included (it receives actor.Stopping); the next request
// activates it again with a new fencing token. Call it on the grain's
// turn. It does nothing for an ordinary actor (or a Context that is not a
// grain's, as for IdentityOf).
func Passivate(ctx actor.Context) {
	ctx = untyped(ctx)
	if s, ok := ctx.(*standaloneGrain); ok {
		s.passivate = true
		return
	}
	if g, ok := ctx.(*grainContext); ok {
		g.passivate = true
	}
}
