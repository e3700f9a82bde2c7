package actor

import (
	"log/slog"
	"runtime/debug"

	"github.com/fraktor-go/fraktor/scheduler"
)

// InvokeBatch implements scheduler.MessageInvoker (S3): before-middleware in
// registration order, system messages, the actor state check, up to
// throughputHint user messages, after-middleware in reverse order on every
// path.
func (c *cell) InvokeBatch(throughputHint int) scheduler.InvokeResult {
	if c.mw == nil || c.mw.inv == nil {
		res, _ := c.run(throughputHint)
		return res
	}
	mw := c.mw.inv
	mw.ictx.Reset(c.idx, throughputHint, c.sys.clock.Now())
	flow, perr := c.beforeInvoke(mw)
	if v, ok := mw.ictx.Get(scheduler.MetaBatchLimit); ok && flow == scheduler.Continue && perr == nil {
		if n, ok := v.(int); ok && n >= 0 && n < throughputHint {
			throughputHint = n
		}
	}
	if flow == scheduler.Break || perr != nil || throughputHint == 0 {
		// A Break holds back user messages only: the runtime's own protocol
		// (stop, watch, supervision) still runs. So does a middleware that
		// panicked, so that its actor can still be restarted or stopped,
		// and a batch limit of 0, which is a Break by another name: a batch
		// of no messages reported as Yielded would be run again at once,
		// for ever (TestBatchLimitZeroDoesNotSpin).
		res, _ := c.run(0)
		if res.Kind == scheduler.ResultCompleted || res.Kind == scheduler.ResultYielded {
			if perr != nil {
				res = c.fail(perr, nil)
			} else {
				res = scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(mw.ictx.ResumeAfter()))
			}
		}
		return c.afterInvoke(mw, res)
	}
	res, processed := c.run(throughputHint)
	// A batch that stopped the actor closed its mailbox, which posters may
	// be draining now: the length is not the batch's to read (see
	// drainSystem), and a stopped actor is out of the registry the gauge
	// sums over.
	if c.km.mw != nil && c.state != stateStopped {
		mw.queued.Store(int32(c.mb.UserLen()))
	}
	mw.ictx.Processed = processed
	return c.afterInvoke(mw, res)
}

// beforeInvoke runs the invoke middleware's BeforeInvoke. Invoke middleware
// is user code (WithInvokeMiddleware, KindMiddleware) running on a worker,
// outside run's recover: a panic in it is returned as the actor's failure
// instead of ending the process (TestInvokeMiddlewarePanicIsFailure).
func (c *cell) beforeInvoke(mw *invokeMW) (flow scheduler.ControlFlow, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
			if pp, ok := r.(producerPanic); ok {
				err = pp.err // a factory's panic (newInvokeMW)
			}
		}
	}()
	return mw.chain.BeforeInvoke(&mw.ictx), nil
}

// afterInvoke runs the invoke middleware's AfterInvoke and returns the
// invocation's result: res, or the actor's failure when AfterInvoke
// panicked and the actor is alive (a panic after its stop or failure is
// logged).
func (c *cell) afterInvoke(mw *invokeMW, res scheduler.InvokeResult) (out scheduler.InvokeResult) {
	defer func() {
		if r := recover(); r != nil {
			err := &PanicError{Value: r, Stack: debug.Stack()}
			out = res
			if c.state == stateAlive && !c.mb.Suspended() {
				out = c.fail(err, nil)
				return
			}
			c.sys.logger.Warn("invoke middleware panicked", "pid", c.selfPID().String(), "panic", r)
		}
	}()
	mw.chain.AfterInvoke(&mw.ictx, res)
	return res
}

// run processes one batch of at most hint user messages and returns how
// many it processed; a panic anywhere in it is the actor's failure.
func (c *cell) run(hint int) (res scheduler.InvokeResult, processed int) {
	defer func() {
		if r := recover(); r != nil {
			msg := c.msg
			c.msg, c.sender = nil, nil
			c.clearHeader()
			var err error = &PanicError{Value: r, Stack: debug.Stack()}
			if pp, ok := r.(producerPanic); ok {
				err = pp.err // the producer's own failure (props.go)
			}
			res = c.fail(err, msg)
		}
	}()
	if res, done := c.drainSystem(); done {
		return res, processed
	}
	for processed < hint {
		var env envelope
		if x := c.x; x != nil && len(x.pending) > 0 {
			env = x.pending[0]
			x.pending[0] = envelope{}
			x.pending = x.pending[1:]
		} else {
			var ok bool
			if env, ok = c.mb.PopUser(); !ok {
				return scheduler.Completed(c.mb.HasSystem()), processed
			}
		}
		processed++
		c.invokeUser(env)
		if x := c.x; x != nil && x.failures != 0 {
			x.failures = 0
		}
		if c.state != stateAlive || c.mb.HasSystem() {
			if res, done := c.drainSystem(); done {
				return res, processed
			}
		}
	}
	if x := c.x; (x == nil || len(x.pending) == 0) && c.mb.UserLen() == 0 {
		// The hint is used up and nothing is left: completed, not yielded,
		// so the runnable is not scheduled again only to find nothing (a
		// caller turn handles one message: scheduler.RunCallerTurn). A
		// post racing with this is caught by SetIdle, as after any batch.
		return scheduler.Completed(c.mb.HasSystem()), processed
	}
	return scheduler.Yielded(), processed
}

// drainSystem handles every queued system message, then checks the actor's
// state; done means the batch ends with res.
//
// A stop that finished in a user message of this batch (a PoisonPill) has
// closed the mailbox, and a poster that queued before the close and found
// it closed after drains it on its own goroutine (mailbox.Close): the batch
// is no longer the mailbox's consumer, so it looks at the state before it
// pops. Popping first made two consumers of the system queue, which could
// both take one message (TestStopInBatchLeavesClosedMailboxToPosters).
func (c *cell) drainSystem() (res scheduler.InvokeResult, done bool) {
	if c.state == stateStopped {
		return scheduler.Stopped(), true
	}
	for {
		env, ok := c.mb.PopSystem()
		if !ok {
			break
		}
		c.handleSystem(env.msg)
		if c.state == stateStopped {
			return scheduler.Stopped(), true
		}
		if x := c.x; x != nil && x.escalate != nil {
			f := x.escalate
			x.escalate = nil
			return c.fail(f.Err, f.Message), true
		}
	}
	if c.state == stateStopped {
		return scheduler.Stopped(), true
	}
	if c.mb.Suspended() {
		return scheduler.Suspended(scheduler.ReasonActor, scheduler.ResumeExternal()), true
	}
	return res, false
}

func (c *cell) invokeUser(env envelope) {
	switch m := env.msg.(type) {
	case *PoisonPill:
		c.beginStop()
		return
	case *timeoutMsg:
		c.onTimeoutTick(m)
		return
	case *Timer:
		c.onTimer(m)
		return
	case *continuation:
		c.onContinuation(m)
		return
	case *MessageEnvelope:
		c.invokeEnveloped(m, env.sender)
		return
	case *Terminated:
		if env.sender == watchTerm {
			env.sender = nil // the runtime's mark (onTerminated), not a sender
		}
		if x := c.x; x != nil && len(x.terms) > 0 && !x.takeTerm(m) {
			return // its watch was cancelled after it was queued
		}
	}
	if x := c.x; x != nil && x.recvTimeout > 0 {
		x.lastActivity = c.sys.clock.Now()
	}
	c.msg, c.sender = env.msg, env.sender
	c.dispatch()
	c.msg, c.sender = nil, nil
}

// invokeEnveloped handles a message that came with a header: Receive sees
// the message, and the header through MessageHeader.
func (c *cell) invokeEnveloped(m *MessageEnvelope, sender *PID) {
	if m == nil {
		return
	}
	c.ext().header = m.Header
	c.invokeUser(envelope{msg: m.Message, sender: sender})
	c.clearHeader()
}

// clearHeader forgets the header of the message just handled.
func (c *cell) clearHeader() {
	if x := c.x; x != nil {
		x.header = nil
	}
	if ch := c.mw; ch != nil {
		ch.cur = nil
	}
}

// deliver hands a runtime message (lifecycle, Terminated) to Receive.
func (c *cell) deliver(msg any) {
	c.msg, c.sender = msg, nil
	c.dispatch()
	c.msg = nil
}

// dispatch runs the current message through the receive middleware, if
// any, to the behaviour.
func (c *cell) dispatch() {
	if len(c.props.o().receiveMW) > 0 {
		c.chains().recv(c)
		return
	}
	c.receive(c)
}

// deliverSafely is deliver for the stop path: a panic there is logged, not
// supervised, because the actor is going away anyway.
func (c *cell) deliverSafely(msg any) {
	defer func() {
		if r := recover(); r != nil {
			c.msg, c.sender = nil, nil
			c.sys.logger.Warn("actor panicked while stopping", "pid", c.selfPID().String(), "panic", r)
		}
	}()
	c.deliver(msg)
}

// receiveTracked is the innermost function of a receive chain: it records
// the Context the actor is handed, for the send chain (see send).
func (c *cell) receiveTracked(ctx Context) {
	ch := c.mw
	prev := ch.cur
	ch.cur = ctx
	c.receive(ctx)
	ch.cur = prev
}

// receive is the innermost ReceiveFunc: the current behaviour, or the
// actor's Receive, with ctx, which is c or a middleware's wrapper of it.
func (c *cell) receive(ctx Context) {
	if x := c.x; x != nil {
		if n := len(x.behaviour); n > 0 {
			x.behaviour[n-1](ctx)
			return
		}
	}
	c.actor.Receive(ctx)
}

func (c *cell) handleSystem(msg any) {
	switch m := msg.(type) {
	case *startMsg:
		c.deliver(startedMsg)
	case *Stop:
		c.beginStop()
	case *stopWatchMsg:
		c.stopAndTell(m)
	case *Watch:
		c.addWatcher(m.Watcher)
	case *watchUpdate:
		c.applyWatchUpdate(m)
	case *Unwatch:
		c.ext().watchers.remove(m.Watcher)
	case *TerminatedSystem:
		c.onTerminated(m.Terminated)
	case *failureMsg:
		c.onChildFailure(m)
	case *resumeMsg:
		if c.state == stateAlive {
			c.mb.Resume()
		}
	case *restartMsg:
		c.beginRestart()
	case *Timer, *timeoutMsg, *continuation, *Terminated:
		// A tick, or a watched actor's Terminated (onTerminated), that a
		// full bounded mailbox would have refused or dropped: it runs ahead
		// of the mailbox, when user messages run. Only the runtime posts
		// these to the system queue (a *Terminated is no SystemMessage).
		x := c.ext()
		x.pending = append(x.pending, envelope{msg: m})
	}
}

// addWatcher lists w for a Terminated when c stops (once).
func (c *cell) addWatcher(w *PID) {
	x := c.ext()
	if x.watchers.list == nil {
		x.watchers.list = x.watcher1[:0]
	}
	x.watchers.add(w)
}

func (c *cell) onTerminated(t Terminated) {
	// A child normally took itself out of the set already (childStopped);
	// this covers a Terminated that arrives without that.
	c.removeChild(t.Who)
	var watched bool
	if x := c.x; x != nil {
		watched = x.watching.remove(t.Who)
	}
	if watched && c.state == stateAlive {
		// Through the user queue, so that Terminated arrives after every
		// message the watched actor sent before it stopped; listed in
		// terms until then, so that an Unwatch meanwhile cancels it. A
		// full bounded mailbox neither refuses nor drops it (the watchTerm
		// mark): it goes through the system queue, ahead of the messages
		// the mailbox holds, rather than being lost, which left the watcher
		// holding a dead PID for good (TestBoundedMailboxWatcherGetsTerminated).
		term := &Terminated{Who: t.Who, Why: t.Why}
		c.x.terms = append(c.x.terms, queuedTerm{t: term})
		if err := c.mb.PostUser(c.worker, envelope{msg: term, sender: watchTerm}); err != nil {
			c.mb.PostSystem(c.worker, envelope{msg: term, sender: watchTerm})
		}
	}
	if c.state != stateAlive && c.childOf(t.Who) != nil {
		c.tryComplete() // a child stopped while c waits for its children
	}
}

func (c *cell) beginStop() {
	if c.state == stateStopping || c.state == stateStopped {
		return
	}
	if !c.mb.StopMarked() { // a Stop marked it already, as a rule
		c.mb.MarkStop() // later Stops queue nothing (postSystem)
	}
	c.windDown(stateStopping, stoppingMsg)
}

func (c *cell) beginRestart() {
	if c.state != stateAlive {
		return
	}
	c.windDown(stateRestarting, restartingMsg)
}

// windDown is the common start of a stop and a restart: no more user
// messages, no receive timeout, the lifecycle message, the children
// stopped; tryComplete finishes once they are gone.
func (c *cell) windDown(s cellState, lifecycle any) {
	c.state = s
	c.mb.Suspend()
	c.cancelReceiveTimeout()
	c.cancelTimers()
	if c.x != nil {
		c.x.incarnation++ // continuations of this incarnation are dropped
	}
	c.deliverSafely(lifecycle)
	// From here on, a stopping child tells c (childStopped), and the
	// children c has now are the ones to stop.
	var kids []*PID
	if g := c.kids(); g != nil {
		kids = g.windDown(true)
	} else {
		c.mu.Lock()
		c.childWait = true
		if c.children != nil && c.children.live > 0 {
			kids = c.children.snapshot()
		}
		c.mu.Unlock()
	}
	for _, pid := range kids {
		c.sys.sendSystem(c.worker, pid, stopSys)
	}
	c.tryComplete()
}

// tryComplete finishes a stop or restart once the children are gone.
func (c *cell) tryComplete() {
	if c.childCount() > 0 {
		return
	}
	switch c.state {
	case stateStopping:
		c.finalize()
	case stateRestarting:
		c.state = stateAlive
		c.setChildWait(false)
		c.actor = c.props.newActor()
		c.cancelTimers() // those set while restarting
		if x := c.x; x != nil {
			x.incarnation++
			x.behaviour = nil
			x.recvTimeout = 0 // cancelled by windDown; the new instance sets its own
			if len(x.stash) > 0 {
				x.pending = append(x.stash, x.pending...)
				x.stash = nil
			}
		}
		c.mb.Resume()
		c.sys.metrics.restarted(c)
		c.sys.logger.Debug("actor restarted", "pid", c.selfPID().String())
		c.deliver(startedMsg)
	}
}

func (c *cell) finalize() {
	c.deliverSafely(stoppedMsg)
	c.cancelTimers() // those set while stopping
	c.state = stateStopped
	c.actor = nil
	var onStopped func()
	if x := c.x; x != nil {
		onStopped = x.onStopped
		for _, e := range x.pending {
			if !isTick(e.msg) { // the actor's own: nothing to report (Sink)
				c.sys.deadLetter(c.selfPID(), e.msg, e.sender, nil)
			}
		}
		x.pending = nil
	}
	// Closed before it leaves the registry: what was queued is drained
	// now, each a dead letter of this actor (Sink finds it still
	// registered, so rebind moves none of it); only what is posted after
	// the name was freed can reach a new actor under it, on its sender's
	// goroutine, after what that sender posted before. The other way
	// round a new actor could take the name during the drain and get the
	// queued messages after one its sender posted later
	// (TestReview6StalePIDKeepsOneSendersOrderAcrossTheDrain).
	c.mb.Close()
	c.sys.registry.removeCell(c)
	// Out of the parent's list before anyone hears of the stop: a watcher
	// (StopFuture, Watch) that lists the parent's children must not find
	// the child it was told has stopped.
	tellParent := false
	if c.parent != nil {
		p := c.parent.local.Load()
		tellParent = p == nil || p.childStopped(c)
	}
	var term *TerminatedSystem // shared by every recipient: read-only
	if x := c.x; x != nil {
		if len(x.watchers.list) > 0 {
			term = &TerminatedSystem{Terminated{Who: c.selfPID(), Why: TerminatedStopped}}
		}
		for _, e := range x.stash {
			c.sys.deadLetter(c.selfPID(), e.msg, e.sender, nil)
		}
		x.watchers.each(func(w *PID) {
			if tellParent && w.Equal(c.parent) {
				// The parent waits for its children and watches this one:
				// one Terminated tells it both. A second one came after the
				// first had ended the parent's restart, to the new
				// instance, naming the child it had just spawned under
				// the same name: it took that child out of the parent's
				// list and reached its Receive as that live child's
				// Terminated (TestNewuser8RestartedParentGetsStaleTerminatedNamingItsLiveChild).
				tellParent = false
			}
			c.sys.sendSystem(c.worker, w, term)
		})
		x.watching.each(func(w *PID) { c.sys.sendSystem(c.worker, w, &Unwatch{Watcher: c.selfPID()}) })
		c.x = nil
	}
	if tellParent {
		if term == nil {
			term = &TerminatedSystem{Terminated{Who: c.selfPID(), Why: TerminatedStopped}}
		}
		c.sys.sendSystem(c.worker, c.parent, term)
	}
	c.sys.metrics.stopped(c)
	if onStopped != nil {
		onStopped()
	}
}

// fail suspends the actor and tells its supervisor (S6).
func (c *cell) fail(err error, msg any) scheduler.InvokeResult {
	x := c.ext()
	x.failures++
	failures := x.failures
	retry := scheduler.Backoff(int(failures) - 1)
	c.mb.Suspend()
	c.sys.metrics.failed(c)
	if c.sys.logger.Enabled(bg, slog.LevelWarn) {
		path, _ := c.sys.PathOf(c.selfPID()) // the ID of a nested actor does not show its ancestors
		c.sys.logger.Warn("actor failed", "pid", c.selfPID().String(), "path", path, "err", err, "consecutive", failures)
	}
	if c.parent == nil {
		c.sys.logger.Error("guardian failed; stopping it", "pid", c.selfPID().String(), "err", err)
		c.beginStop()
		if c.state == stateStopped {
			return scheduler.Stopped()
		}
		return scheduler.Failed(err, retry)
	}
	c.sys.sendSystem(c.worker, c.parent, &failureMsg{child: c.selfPID(), err: err, message: msg, failures: int(failures), retry: retry, stats: &x.stats})
	return scheduler.Failed(err, retry)
}

func (c *cell) onChildFailure(m *failureMsg) {
	if !c.isChild(m.child) {
		return
	}
	f := Failure{
		Child: m.child, Err: m.err, Message: m.message,
		Consecutive: m.failures, RetryAfter: m.retry, Stats: m.stats,
	}
	if c.sys.events.Len() == 0 { // nobody to tell: no recorder
		c.props.supervisorStrategy().HandleFailure(c, f)
		return
	}
	r := &decisionRecorder{cell: c, child: m.child}
	c.props.supervisorStrategy().HandleFailure(r, f)
	if r.decided {
		c.sys.events.Publish(&SupervisionEvent{
			Child: m.child, Supervisor: c.selfPID(), Err: m.err,
			Directive: r.d, Consecutive: m.failures, After: r.after,
		})
	}
}

// newInvokeMW calls a WithInvokeMiddleware factory. It runs inside Spawn,
// on the spawner's goroutine, so a panic in it is not let through: the
// actor gets a middleware that panics with it instead, which fails the
// actor on its first turn (beforeInvoke), as a panicking producer does.
func newInvokeMW(factory func() scheduler.Middleware) (m scheduler.Middleware) {
	defer func() {
		if r := recover(); r != nil {
			m = failedMW{&PanicError{Value: r, Stack: debug.Stack()}}
		}
	}()
	return factory()
}

// failedMW stands in for an invoke middleware whose factory panicked.
type failedMW struct{ err *PanicError }

func (f failedMW) BeforeInvoke(*scheduler.InvokeContext) scheduler.ControlFlow {
	panic(producerPanic{f.err})
}
func (failedMW) AfterInvoke(*scheduler.InvokeContext, scheduler.InvokeResult) {}
