package actor

import (
	"context"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// Future is the pending answer to a request. Its PID is the sender of the
// request, so the receiver's Respond completes it. A Future completes once;
// later answers are dropped.
type Future struct {
	sys    *System
	done   chan struct{} // made on first need (waitDone, Done) unless signal; guarded by mu then
	state  atomic.Uint32
	set    bool // result and err are written: PipeTo may read them
	reg    regState
	signal bool // done is a pooled signal, not closed (future_signal.go)
	timed  bool // tm is armed (a timeout, or watchClose) or has fired (guarded by mu)
	result any
	err    error
	tm     timerNode  // the timeout, on the system's timer queue
	mu     sync.Mutex // guards pipes, timed and set
	pipes  *pipeList  // guarded by mu; nil until a PipeTo or a Watch
	ref    procRef
	pidv   PID
	target *PID // the target of the request or stop (nil: neither); see FailRequestsTo, turnCell
	idbuf  futureID
}

// regState says where a future is registered. (A byte beside the other
// flags, so the Future keeps its size class, TestFutureIDInline.)
type regState uint8

const (
	regNone    regState = iota // not registered: no remote handler was set
	regID                      // in the registry by its ID
	regIndexed                 // by its ID, and by its target's address (request_index.go)
)

func (s *System) newFuture(target *PID, timeout time.Duration) *Future {
	return s.startFuture(&Future{}, target, timeout)
}

// startFuture sets up f and registers it.
func (s *System) startFuture(f *Future, target *PID, timeout time.Duration) *Future {
	f.sys, f.target = s, target
	id := f.idbuf.format(s.futureSeq.Add(1), newFutureTag())
	f.pidv.Address, f.pidv.ID = s.Address(), id
	f.ref.p = f
	f.pidv.cacheRef(&f.ref)
	s.metrics.futureStarted()
	// Registered, f is reachable by ID (answers from the wire), and once
	// indexed, by its target's address (failRequestsTo); either way it may
	// complete at once on another goroutine: every field complete reads is
	// written before add. Whether f is indexed is decided here, once: a
	// request to an address that later becomes this node's own (remote
	// sets it at its start) stays indexed, and failRequestsTo refuses
	// this node's address as before.
	if s.registerFutures.Load() {
		f.reg = regID
		if target != nil && s.otherNode(target.Address) {
			f.reg = regIndexed
		}
	}
	for f.reg != regNone && !s.registry.add(id, f) {
		// Another process has this ID. Spawn and RegisterProcess refuse
		// IDs of a future's form (a peer that saw a future's ID as a
		// request's sender could otherwise name the next one in a remote
		// spawn, TestFutureIDNeverTakenFromAnActor); should one get in all
		// the same, the future takes the next number, so that answers from
		// the wire, looked up by ID, reach it and not the other process.
		id = f.idbuf.format(s.futureSeq.Add(1), newFutureTag())
		f.pidv.ID = id
	}
	if f.reg == regIndexed {
		s.indexRequest(f)
	}
	if s.stopped.Load() {
		f.complete(nil, ErrSystemStopped)
		return f
	}
	if timeout > 0 {
		f.mu.Lock()
		closed := false
		if !f.set { // completed meanwhile: no timer to cancel later
			if f.tm.target == nil { // a hooked future's is set (future_hook.go)
				f.tm.target = f
			}
			f.timed = s.tq.arm(&f.tm, timeout, 0)
			closed = !f.timed
		}
		f.mu.Unlock()
		if closed { // Shutdown closed the timer queue since the check above
			f.complete(nil, ErrSystemStopped)
		}
	}
	return f
}

// PID is the future's address: the sender of its request.
func (f *Future) PID() *PID { return &f.pidv }

// Done is closed when the future completes. A future without a timeout
// fails at Shutdown only once a waiter blocks in Result, Wait or
// ResultContext (see watchClose), so a select on Done alone needs a way
// out of its own (a context).
func (f *Future) Done() <-chan struct{} {
	f.releaseTurn()
	f.mu.Lock()
	if f.done == nil {
		f.done = make(chan struct{})
		if f.set {
			close(f.done)
		}
	}
	d := f.done
	set := f.set
	f.mu.Unlock()
	if !set {
		// The caller may block on d next (a select with a timeout): see
		// cell.requestSignal.
		f.wakeIdle()
	}
	return d
}

// wakeIdle wakes a parked worker of the target's pool for the runnables
// waiting in its queue (scheduler.Coordinator.WakeIdle): f's waiter is
// about to block on the target's answer, possibly on a worker of that
// pool that released the target into the queue without a wake (see
// cell.requestSignal). The target's pool, not the shared one: an actor on
// a pool of its own (WithDispatcher, SystemConfig.Dispatcher) requesting
// another of the same pool was stranded the same way
// (TestReview11RequestFromReceiveOnOwnPoolDoesNotStrandTheTarget). A
// future without a local target wakes the shared pool; a FailedFuture has
// no system (TestReview11FailedFutureResultContext).
func (f *Future) wakeIdle() {
	if f.sys == nil {
		return
	}
	if t := f.target; t != nil {
		if c := t.local.Load(); c != nil {
			if w, ok := c.mb.Dispatcher().(interface{ WakeIdle() }); ok {
				w.WakeIdle()
			}
			return
		}
	}
	f.sys.coord.WakeIdle()
}

// awaitClose is watchClose for a waiter that is about to block on f.
func (f *Future) awaitClose() {
	f.mu.Lock()
	closed := f.watchClose()
	f.mu.Unlock()
	if closed {
		f.complete(nil, ErrSystemStopped)
	}
}

// watchClose makes a pending future without a timeout, whose waiter is
// about to block on it (Result, Wait, ResultContext, Request), fail with
// ErrSystemStopped at Shutdown, as one with a timeout does: its node hears
// of the timer queue's close (armClose), which comes after every actor has
// stopped, when no answer can come any more. Before, only a timeout's node
// was closed, and a waiter without one waited for good
// (TestUntimedRequestFailsAtShutdown). A future answered before anyone
// waits arms nothing; Done and PipeTo arm nothing either, as they do not
// block, and the node keeps its future until it completes or the system
// shuts down (an abandoned future would be kept that long). Called with
// f.mu held; true means the queue is closed already, and the caller
// completes f with ErrSystemStopped once it has let go of f.mu.
func (f *Future) watchClose() (closed bool) {
	if f.set || f.timed {
		return false
	}
	if f.tm.target == nil { // a hooked future's is set (future_hook.go)
		f.tm.target = f
	}
	f.timed = f.sys.tq.armClose(&f.tm)
	return !f.timed
}

// waitDone blocks until f has completed. A future's done channel is made
// only when someone has to wait on it: a request whose answer came before
// anyone waited (its turn ran on the caller, future_deferred.go) makes
// none, which is an allocation and a close less. complete writes the
// result before it sets set under mu, so seeing set under mu is seeing the
// result.
func (f *Future) waitDone() {
	f.mu.Lock()
	if f.set {
		f.mu.Unlock()
		return
	}
	if f.done == nil {
		f.done = make(chan struct{})
	}
	d := f.done
	closed := f.watchClose()
	f.mu.Unlock()
	if closed {
		f.complete(nil, ErrSystemStopped)
	}
	f.wakeIdle() // about to block: see cell.requestSignal
	<-d
}

// Result waits for the answer. On a request from outside whose target has
// not started on it, it may run the target's turn on the calling goroutine
// (docs/actors.md, "Requests from outside"). On a manual executor
// (testkit.NewManualSystem) nothing runs while the test's goroutine waits
// here: run the system first (docs/testing.md, "Deterministic mode").
func (f *Future) Result() (any, error) {
	f.runTurn()
	f.waitDone()
	return f.result, f.err
}

// Wait waits for completion and returns the error, if any; like Result, it
// may run the target's turn.
func (f *Future) Wait() error {
	f.runTurn()
	f.waitDone()
	return f.err
}

// ResultContext waits for the answer or for ctx; on ctx's end the future is
// failed with ErrTimeout (wrapping ctx's error) and that is returned. Like
// Result it may run the target's turn, unless ctx has ended; ctx cannot
// interrupt that turn.
func (f *Future) ResultContext(ctx context.Context) (any, error) {
	if f.hasTurn() {
		if ctx.Err() != nil {
			f.releaseTurn()
		} else {
			f.runTurn()
		}
	}
	if done := ctx.Done(); done == nil {
		f.waitDone()
	} else {
		f.awaitClose()
		f.wakeIdle() // about to block: see cell.requestSignal
		select {
		case <-f.Done():
		case <-done:
			f.complete(nil, f.timeoutError(fmt.Errorf("%w: %w", ErrTimeout, ctx.Err())))
			f.waitDone()
		}
	}
	return f.result, f.err
}

// PipeTo sends the answer (or the error) to each pid when the future
// completes, or at once if it has.
func (f *Future) PipeTo(pids ...*PID) {
	f.releaseTurn()
	f.mu.Lock()
	// Not state: it turns non-zero before the result is written; set is
	// written under mu after it, so a PipeTo that finds it false leaves the
	// pids to complete.
	if !f.set {
		l := f.pipeList()
		l.pids = append(l.pids, pids...)
		f.mu.Unlock()
		return
	}
	f.mu.Unlock()
	f.pipe(pids)
}

func (f *Future) pipe(pids []*PID) {
	v := f.result
	if f.err != nil {
		v = f.err
	}
	if f.sys == nil {
		f.pipeNoSystem(v, pids)
		return
	}
	for _, p := range pids {
		f.sys.send(nil, p, v, nil)
	}
}

// pipeList holds the PIDs of PipeTo and the future's watchers while the
// future is pending, apart from the Future: most futures have neither, and
// a pointer where a slice took 24 bytes keeps the Future, with its longer
// ID (futureID), in its size class.
type pipeList struct {
	pids []*PID
	// watchers are the future's watchers (Watch), each told Terminated
	// when it completes: a set, so a watcher that watches again is told
	// once, and Unwatch takes it out.
	watchers pidSet
}

// pipeList returns f's pipe list, made on first need; f.mu is held.
func (f *Future) pipeList() *pipeList {
	if f.pipes == nil {
		f.pipes = &pipeList{}
	}
	return f.pipes
}

func (f *Future) complete(v any, err error) {
	if !f.state.CompareAndSwap(0, 1) {
		return
	}
	// A nil one is an answer like any other: reading it would panic after
	// the compare-and-swap, with the future never set and its waiters
	// waiting for good (TestFutureNilDeadLetterResponse).
	if dl, ok := v.(*DeadLetterResponse); ok && dl != nil {
		if dl.Reason != nil {
			v, err = nil, fmt.Errorf("%w: %s: %w", ErrDeadLetter, dl.Target, dl.Reason)
		} else {
			v, err = nil, fmt.Errorf("%w: %s", ErrDeadLetter, dl.Target)
		}
	}
	f.result, f.err = v, err
	f.mu.Lock()
	f.set = true
	pipes := f.pipes
	f.pipes = nil
	timed := f.timed
	done := f.done
	hook := hookOf(f.tm.target)
	f.mu.Unlock()
	f.signalDone(done)
	if timed {
		f.sys.tq.cancel(&f.tm)
	}
	if f.reg != regNone {
		f.sys.registry.remove(f.pidv.ID)
		if f.reg == regIndexed {
			f.sys.registry.removeRequest(f.target.Address, f)
		}
	}
	f.sys.metrics.futureCompleted(err)
	f.releaseTurn() // completed before anyone waited: the request still runs
	if pipes != nil {
		f.pipe(pipes.pids)
		if len(pipes.watchers.list) > 0 {
			// One message for every watcher, read-only, as an actor's stop sends.
			term := &TerminatedSystem{Terminated{Who: &f.pidv, Why: TerminatedStopped}}
			pipes.watchers.each(func(w *PID) { f.sys.sendSystem(nil, w, term) })
		}
	}
	if hook != nil {
		hook.FutureCompleted(f, v, err)
	}
}

// fireTimer implements timerTarget: the timeout.
func (f *Future) fireTimer() { f.complete(nil, f.timeoutError(ErrTimeout)) }

// timeoutError is err, the timeout of f (ErrTimeout, wrapping a context's
// error when one ended the wait), with why, for a request to another
// address that the transport has no connection to (Host.SetTimeoutCause):
// "actor: timeout (no connection to 10.0.0.2:7000: remote: handshake
// rejected by peer (remote: system name mismatch))", errors.Is matching
// the transport's sentinel too. Before, a request to a node that refused
// this one's handshake read "actor: timeout" and nothing else. Only the
// timeout's path pays for it.
func (f *Future) timeoutError(err error) error {
	t := f.target
	if t == nil || t.Address == "" || t.Address == f.sys.Address() {
		return err
	}
	fn := f.sys.timeoutCause.Load()
	if fn == nil {
		return err
	}
	cause := (*fn)(t.Address)
	if cause == nil {
		return err
	}
	return fmt.Errorf("%w (no connection to %s: %w)", err, t.Address, cause)
}

// closeTimer implements timerCloser: Shutdown closed the timer queue
// before the timeout fired, so the timeout never will; and no answer can
// come any more (TestPendingRequestFailsAtShutdown).
func (f *Future) closeTimer() { f.complete(nil, ErrSystemStopped) }

// SendUser implements Process: the first message completes the future.
// A MessageEnvelope completes it with the message it carries.
func (f *Future) SendUser(_ *PID, msg any, _ *PID) {
	if e, ok := msg.(*MessageEnvelope); ok && e != nil {
		msg = e.Message
	}
	f.complete(msg, nil)
}

// SendSystem implements Process: a Terminated completes the future with
// *Terminated (that is how StopFuture learns of the stop); a Stop (Stop,
// StopFuture of the future's PID) fails it with ErrFutureStopped; a Watch
// is answered with Terminated once it has completed (at once if it has),
// and an Unwatch cancels it. Others are ignored. Before, Stop and Watch
// were ignored too: a stopped future went on waiting, and StopFuture of
// its PID never completed (TestStopFutureOfFuture).
//
// The watchers are a set, as an actor's are: a watcher that watches again
// is told once, and an Unwatch takes it out. Before, each Watch added a
// relay to the future, kept until it completed, and Unwatch was ignored,
// so a peer that was sent a request could alternate WatchRequest and
// UnwatchRequest for its future and make the node hold a relay per pair,
// and send as many Terminated (TestFutureWatchUnwatchFromPeerBounded,
// remote).
func (f *Future) SendSystem(_ *PID, m SystemMessage) {
	switch m := m.(type) {
	case *TerminatedSystem:
		// The message is shared by every watcher and read-only (finalize),
		// so the future's result points into it instead of copying it.
		f.complete(&m.Terminated, nil)
	case *Stop:
		f.complete(nil, ErrFutureStopped)
	case *Watch:
		if m.Watcher == nil || f.sys == nil { // FailedFuture: no system to tell it through
			return
		}
		f.releaseTurn()
		f.mu.Lock()
		if !f.set {
			f.pipeList().watchers.add(m.Watcher)
			f.mu.Unlock()
			return
		}
		f.mu.Unlock()
		f.sys.sendSystem(nil, m.Watcher, &TerminatedSystem{Terminated{Who: &f.pidv, Why: TerminatedStopped}})
	case *Unwatch:
		if m.Watcher == nil {
			return
		}
		f.mu.Lock()
		if f.pipes != nil {
			f.pipes.watchers.remove(m.Watcher)
		}
		f.mu.Unlock()
	}
}

// StopProcess implements Process: the future fails with ErrFutureStopped.
func (f *Future) StopProcess(_ *PID) { f.complete(nil, ErrFutureStopped) }

// failRequestsTo fails every pending request future whose request went to
// a process at address, with an error that wraps ErrDeadLetter and reason,
// and returns how many it failed. It is for the remote extension, which
// calls it when the node at address is declared gone, so that requests
// waiting for an answer from it fail at once instead of at their deadline.
// Only futures made by RequestFuture (and Request) are affected, and only
// while futures are registered (SetRemoteHandler). It takes them from the
// request index (request_index.go), not from a walk of the registry: its
// cost is the number of requests pending to address. Safe for concurrent
// use.
func (s *System) failRequestsTo(address string, reason error, mark uint64) int {
	if !s.otherNode(address) {
		return 0
	}
	n := 0
	for f := range s.registry.takeRequests(address) {
		if mark != 0 && f.seq() >= mark {
			// Made after the mark: back in the index, as it was made
			// (indexRequest: one that completed meanwhile leaves again).
			s.indexRequest(f)
			continue
		}
		if f.state.Load() == 0 {
			f.complete(nil, fmt.Errorf("%w: request to %s: %w", ErrDeadLetter, f.target, reason))
			n++
		}
	}
	return n
}

// seq returns the sequence number of f's ID (RequestMark's order).
func (f *Future) seq() uint64 {
	n, _ := seqOfFutureID(f.pidv.ID)
	return n
}

// indexRequest puts f, registered by ID, in the request index under its
// target's address. Only after the registry has it: failRequestsTo may
// complete it as soon as it is indexed, and a completion before the
// registry's add would leave the completed future in the registry for
// good. Whatever completed f in between (an answer to its ID) removed it
// from the index before it was there, so f, found completed after the
// add, is taken out again (TestIndexRequestCompletedMeanwhile): either
// that check sees the completion, or the completion's removal comes after
// the add, under the same lock.
func (s *System) indexRequest(f *Future) {
	s.registry.addRequest(f.target.Address, f)
	if f.state.Load() != 0 {
		s.registry.removeRequest(f.target.Address, f)
	}
}

// otherNode reports whether address names another node than this one.
func (s *System) otherNode(address string) bool {
	return address != "" && address != LocalAddress && address != s.Address()
}

// Requester is anything that can make a request: the root context and actor contexts.
type Requester interface {
	RequestFuture(pid *PID, msg any, timeout time.Duration) *Future
}

// Request sends msg to pid and waits for a reply of type T, for as long as
// ctx allows (its deadline is the timeout). It returns ErrTimeout (wrapping
// ctx's error) when ctx ends first, ErrDeadLetter when pid does not exist,
// ErrSystemStopped when the system shuts down before the reply, and
// *TypeMismatchError when the reply is not a T.
//
// From the root context, when the process's worker pools are idle and pid
// is an idle actor of the shared pool, the actor's turn runs on the
// calling goroutine (see actor/caller_turn.go); ctx cannot interrupt that
// turn, and the answer it gives is returned.
func Request[T any](ctx context.Context, r Requester, pid *PID, msg any) (T, error) {
	var zero T
	var v any
	var err error
	if pr, ok := r.(signalRequester); ok {
		v, err = pr.requestSignal(ctx, pid, msg).awaitSignal(ctx)
	} else {
		v, err = r.RequestFuture(pid, msg, 0).ResultContext(ctx)
	}
	if err != nil {
		return zero, err
	}
	t, ok := v.(T)
	if !ok {
		return zero, &TypeMismatchError{Want: reflect.TypeFor[T](), Got: v}
	}
	return t, nil
}
