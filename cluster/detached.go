package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// A detached Cluster is a cluster extension without a runtime: no remote,
// no membership, no placement. Its grain calls (Request, RequestFuture,
// Call, CallFuture, Send, and the generated clients, which call them) go
// to a GrainRouter instead of to grains. It exists so that a grain can be
// unit-tested without a cluster while the grains it calls are stood in
// for: testkit.NewGrain installs one, and its stubs are the router.
//
// The calls keep what a caller of a real cluster sees of them: the same
// refusals first (an invalid identity, a nil message, a cluster that has
// shut down), the same deadline (the ctx of Request and Call, without a
// deadline Config.RequestTimeout; the futures' timeout, on the system's
// clock, so a manual clock's virtual time), the same timeout error
// (ErrTimeout), a typed call's *GrainError, and CodeInternal when the
// router panics, as when a grain method panics. A real Cluster pays one
// nil check per call for it.

// GrainRouter answers the grain calls of a detached Cluster
// (InstallDetached). RouteGrain is called once per call, on the caller's
// goroutine (inside a grain: on its turn), after the call passed the
// checks a real call makes; it must not block. It answers the call at
// once or later, from any goroutine (GrainCall.Reply, GrainCall.Fail), or
// never: the caller then gets ErrTimeout at its deadline. A panic in it
// is recovered: the call fails with a *GrainError of CodeInternal.
type GrainRouter interface {
	RouteGrain(call *GrainCall)
}

// GrainCall is one grain call of a detached Cluster, as its GrainRouter
// gets it: a request to answer, or a Send's message (OneWay). Its methods
// are safe for concurrent use; the first answer wins.
type GrainCall struct {
	// Identity is the grain called.
	Identity Identity
	// Message is the message sent; for Call and CallFuture, a nil protobuf
	// message pointer arrives as an empty message, as it would on the wire.
	Message any

	typed    bool             // Call or CallFuture: a *GrainError reply fails the call
	deliver  func(any, error) // the caller's end; nil for a Send
	answered atomic.Bool      // Reply, Fail, the timeout or Shutdown came
	stop     func() bool      // the future's timeout timer, nil if none; under det.mu
	det      *detached        // to forget the call once answered
	done     chan struct{}    // closed once answered; nil for a Send
	result   struct {
		v any
		e error
	}
}

// OneWay reports whether the call is a Send: nobody waits for an answer,
// and Reply and Fail drop theirs.
func (g *GrainCall) OneWay() bool { return g.deliver == nil }

// Blocking reports whether the caller waits for the answer on its own
// goroutine (Request, Call, a client's blocking method), the one that
// called RouteGrain, rather than holding a future.
func (g *GrainCall) Blocking() bool { return g.done != nil }

// Reply answers the call with reply, as the grain's Respond would: the
// caller of Request gets it (a *actor.TypeMismatchError when it is not
// the T asked for), the caller of Call or CallFuture gets it as the
// method's reply, or, when reply is a *GrainError, as the method's error.
// It reports whether this was the call's answer: false for a Send, and
// for a call already answered, timed out or ended by Shutdown.
func (g *GrainCall) Reply(reply any) bool {
	if ge, ok := reply.(*GrainError); ok && g.typed {
		return g.finish(nil, ge)
	}
	return g.finish(reply, nil)
}

// Fail fails the call with err, which its caller gets as is: a
// *GrainError (NewGrainError) as a typed grain method's error, or one the
// cluster would give (ErrTimeout, ErrNoSuchKind, *ActivationFailedError).
// A nil err fails it with a *GrainError of CodeUnknown. It reports
// whether this was the call's answer, as Reply does.
func (g *GrainCall) Fail(err error) bool {
	if err == nil {
		err = &GrainError{Code: CodeUnknown, Message: "nil error"}
	}
	return g.finish(nil, err)
}

// finish answers the call once: it stops the timeout, hands (v, err) to
// the caller and forgets the call.
func (g *GrainCall) finish(v any, err error) bool {
	if g.deliver == nil || !g.answered.CompareAndSwap(false, true) {
		return false
	}
	if stop := g.det.forget(g); stop != nil {
		stop()
	}
	g.deliver(v, err)
	return true
}

// detached is the state of a detached Cluster (Cluster.det).
type detached struct {
	router  GrainRouter
	mu      sync.Mutex
	pending map[*GrainCall]struct{} // waiting for an answer; failed at Shutdown
	closed  bool                    // Shutdown began: no new calls
}

// track records g as waiting for its answer and, for a future, arms its
// timeout (arm): under d.mu, so that neither Shutdown nor the timeout can
// finish g before its timer is known. It reports false once Shutdown
// began.
func (d *detached) track(g *GrainCall, arm func() func() bool) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return false
	}
	d.pending[g] = struct{}{}
	if arm != nil {
		g.stop = arm()
	}
	return true
}

// forget drops g, answered, and returns its timer's stop, if any.
func (d *detached) forget(g *GrainCall) (stop func() bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.pending, g)
	return g.stop
}

// InstallDetached returns the installer of a detached cluster extension
// (see GrainRouter): Get then returns a Cluster whose grain calls go to r,
// with Config.RequestTimeout at its default. It requires no other
// extension. Status is StatusReady until the system shuts down; there is
// no membership (Self and Lease are zero, Members nil, WaitForMembers
// fails with ErrNotInstalled) and nothing to host grains (Config.Kinds).
// testkit.NewGrain installs one; it is not meant for a running program.
func InstallDetached(r GrainRouter) actor.ExtensionInstaller { return detachedInstaller{r: r} }

type detachedInstaller struct{ r GrainRouter }

func (detachedInstaller) Name() string       { return Name }
func (detachedInstaller) Requires() []string { return nil }
func (detachedInstaller) Enabled() bool      { return true }
func (i detachedInstaller) Validate() error {
	if i.r == nil {
		return invalidConfig("InstallDetached needs a GrainRouter")
	}
	return nil
}

func (i detachedInstaller) Install(_ context.Context, host actor.Host) (actor.Extension, error) {
	sys := host.System()
	c := &Cluster{
		sys:  sys,
		root: sys.Root(),
		cfg:  Config{}.withDefaults(),
		log:  sys.Logger().With("component", "cluster"),
		det:  &detached{router: i.r, pending: map[*GrainCall]struct{}{}},
	}
	c.ctx, c.cancelCtx = context.WithCancel(context.Background())
	c.status.Store(int32(StatusReady))
	return c, nil
}

// shutdownDetached is Shutdown of a detached Cluster: calls still waiting
// fail with ErrShuttingDown, as a real cluster's do, and later ones are
// refused with it.
func (c *Cluster) shutdownDetached() error {
	c.shutOnce.Do(func() {
		c.status.Store(int32(StatusStopped))
		c.cancelCtx()
		d := c.det
		d.mu.Lock()
		d.closed = true
		calls := make([]*GrainCall, 0, len(d.pending))
		for g := range d.pending {
			calls = append(calls, g)
		}
		d.mu.Unlock()
		for _, g := range calls {
			g.finish(nil, fmt.Errorf("%w: %s", ErrShuttingDown, g.Identity))
		}
	})
	return nil
}

// route hands g to the router, and fails it with CodeInternal when the
// router panics, as a grain method's panic fails its call.
func (c *Cluster) route(g *GrainCall) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Debug("cluster: grain router panicked", "kind", g.Identity.Kind, "panic", r)
			g.finish(nil, &GrainError{Code: CodeInternal, Message: wireText(fmt.Sprintf("grain %s panicked: %v", g.Identity, r))})
		}
	}()
	c.det.router.RouteGrain(g)
}

// requestDetached is request on a detached Cluster: ctx has a deadline
// and ends at Shutdown (request made it so).
func (c *Cluster) requestDetached(ctx context.Context, id Identity, msg any) (any, error) {
	if err := c.checkRequest(id, msg); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, c.ended(id, err)
	}
	g := &GrainCall{Identity: id, Message: msg, det: c.det, done: make(chan struct{})}
	g.deliver = func(v any, err error) {
		g.result.v, g.result.e = v, err
		close(g.done)
	}
	if !c.det.track(g, nil) {
		return nil, ErrShuttingDown
	}
	c.route(g)
	select {
	case <-g.done:
	case <-ctx.Done():
		g.finish(nil, c.ended(id, ctx.Err()))
		<-g.done
	}
	return g.result.v, g.result.e
}

// futureDetached is RequestFuture (typed false) and CallFuture (typed
// true) on a detached Cluster: no goroutine, the timeout on the system's
// clock.
func (c *Cluster) futureDetached(id Identity, msg any, timeout time.Duration, typed bool) *actor.Future {
	if timeout <= 0 {
		timeout = c.cfg.RequestTimeout
	}
	f := c.root.NewFuture(0)
	if err := c.checkRequest(id, msg); err != nil {
		f.Complete(nil, err)
		return f
	}
	g := &GrainCall{Identity: id, Message: msg, typed: typed, det: c.det, deliver: f.Complete}
	armed := c.det.track(g, func() func() bool {
		return c.sys.Clock().AfterFunc(timeout, func() {
			g.finish(nil, fmt.Errorf("%w: %s: %w", ErrTimeout, id, context.DeadlineExceeded))
		})
	})
	if !armed {
		f.Complete(nil, ErrShuttingDown)
		return f
	}
	c.route(g)
	return f
}

// sendDetached is Send on a detached Cluster: what it refuses is dropped
// with a Debug log, as a real Send drops it.
func (c *Cluster) sendDetached(id Identity, msg any) {
	if err := c.checkRequest(id, msg); err != nil {
		c.log.Debug("cluster: message not sent", "kind", id.Kind, "err", err)
		return
	}
	c.route(&GrainCall{Identity: id, Message: msg, det: c.det})
}

// sendNotInstalled is Send on a nil Cluster: the message is dropped. No
// system, so no dead letter and no injected logger: slog's default one
// gets a Debug line.
func sendNotInstalled(id Identity) {
	slog.Default().Debug("cluster: not installed: message not sent", "kind", id.Kind)
}

// errDetachedMembers: a detached Cluster has no membership to wait for.
var errDetachedMembers = fmt.Errorf("%w: a detached cluster has no members", ErrNotInstalled)
