package cluster

import "github.com/fraktor-go/fraktor/actor"

// grainReceive is the receive middleware of every grain: it marks the
// activation active for passivation (L4) and reports to the placement actor
// when the Started handler has returned (a panic there is an activation
// failure, V2.2).
func (c *Cluster) grainReceive(next actor.ReceiveFunc, ctx actor.Context) {
	var a *activation
	if v, ok := c.grains.Load(ctx.Self().ID); ok {
		a = v.(*activation)
		a.touched.Store(true)
	}
	if c.pastFence(ctx.Message()) {
		// The member's lease is not guaranteed past the stop budget: the
		// grain handles nothing more (the placement actor stops it at its
		// next tick, which may come late after a stall). A requester's
		// future fails at once as for a dead letter and retries elsewhere.
		if ctx.Sender() != nil {
			ctx.Respond(&actor.DeadLetterResponse{Target: ctx.Self()})
		}
		return
	}
	next(ctx)
	if _, ok := ctx.Message().(*actor.Stopped); ok && a != nil {
		at := c.now()
		a.stoppedAt.Store(&at)
	}
	if _, ok := ctx.Message().(*actor.Started); ok {
		if a != nil {
			a.startedOK.Store(true)
		}
		c.root.Send(c.placement, &grainReady{pid: ctx.Self()})
	}
}

// pastFence reports whether msg, a user message, arrives after the
// member's fence time. Lifecycle messages always pass.
func (c *Cluster) pastFence(msg any) bool {
	switch msg.(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return false
	}
	at := c.fenceAt.Load()
	return at != 0 && c.now().UnixNano() >= at
}

// activationOf returns the activation behind a grain's context.
func activationOf(ctx actor.Context) *activation {
	c := Get(ctx.System())
	if c == nil {
		return nil
	}
	v, ok := c.grains.Load(ctx.Self().ID)
	if !ok {
		return nil
	}
	return v.(*activation)
}

// standaloneGrain is the Context a grain spawned from Kind.StandaloneProps
// receives: it answers IdentityOf and FencingTokenOf without a cluster.
type standaloneGrain struct {
	actor.Context
	id    Identity
	token FencingToken
}

// StandaloneProps returns the kind's props for running one activation
// outside a cluster, as a unit test does (testkit.NewGrain): the grain's
// Context answers IdentityOf with id and FencingTokenOf with token, and
// Passivate poisons the grain. The kind's own receive middleware stays
// outermost; the grain's Receive gets the answering Context.
func (k Kind) StandaloneProps(id Identity, token FencingToken) *actor.Props {
	return k.props.With(actor.WithReceiveMiddleware(func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(ctx actor.Context) { next(&standaloneGrain{Context: ctx, id: id, token: token}) }
	}))
}

// IdentityOf returns the Identity of the grain whose Context ctx is, and
// false when ctx is not a grain's (an ordinary actor, or a grain that has
// stopped).
func IdentityOf(ctx actor.Context) (Identity, bool) {
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
// token (false) when ctx is not a grain's.
func FencingTokenOf(ctx actor.Context) (FencingToken, bool) {
	if s, ok := ctx.(*standaloneGrain); ok {
		return s.token, true
	}
	if a := activationOf(ctx); a != nil {
		return a.lease.Token, true
	}
	return FencingToken{}, false
}

// Passivate stops the grain whose Context ctx is after the messages already
// queued (it receives actor.Stopping); the next request activates it again
// with a new fencing token. It does nothing for an ordinary actor.
func Passivate(ctx actor.Context) {
	if s, ok := ctx.(*standaloneGrain); ok {
		s.Poison(s.Self())
		return
	}
	c := Get(ctx.System())
	if c == nil {
		return
	}
	if _, ok := c.grains.Load(ctx.Self().ID); ok {
		c.root.Send(c.placement, &passivateMsg{pid: ctx.Self()})
	}
}
