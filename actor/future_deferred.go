package actor

import "time"

// Deferred turns: a caller outside the actors that spawns an actor, asks
// it something or stops it, and then waits for the outcome, runs the
// actor's turn itself, as Request does (actor/caller_turn.go), instead of
// waking a worker and parking until the worker wakes it back.
//
// Spawn, RequestFuture and StopFuture cannot run the turn themselves:
// their caller may go on with other work, or start more actors or send
// more requests and then wait for them all, and those must run in
// parallel on the pool. So when the conditions of a caller turn hold (the
// process's workers are all parked, the actor is an idle actor of the
// shared pool), the root context claims the actor's mailbox
// (PostUserClaim, PostSystemClaim) and parks the actor in the system's one
// deferred slot instead of waking a worker. Whoever comes first then
// takes it:
//
//   - Result, Wait or ResultContext (its context not ended) of a future
//     whose request or stop went to that actor run the turn on the caller
//     when a caller turn is allowed at that moment, or hand it to the pool;
//     so does Request to it;
//   - Done, PipeTo and the completion of such a future hand it to the pool;
//   - any other operation of the root context hands it to the pool first
//     (the caller has moved on), except a RequestFuture or StopFuture to
//     the same actor, which joins the turn: a spawn followed by
//     StopFuture(pid).Wait() runs Started and the stop in one turn on the
//     caller, with no hand-off between goroutines at all. A Spawn,
//     RequestFuture or StopFuture that finds the slot holding another
//     actor hands that one to the pool and goes to the pool itself, so
//     that two requests (or starts) sent before either is awaited run in
//     parallel;
//   - the sweep, a timer armed when the slot fills and none is armed, hands
//     whatever the slot holds to the pool when it fires, deferredTurnGrace
//     later: an actor whose spawner or requester never waits on it starts
//     or answers at most that much later (and messages that other
//     goroutines send it meanwhile wait as long).
//
// One slot per system. The sweep is a node of the system's timer queue,
// armed at most once per grace period however many turns pass, so a
// deferred turn costs no timer of its own. Only with the system clock:
// under a virtual clock the sweep would not fire unless a test moved the
// clock.
//
// TestRequestFutureDeferred*, TestSpawnDeferred* and TestStopFutureDeferred*
// pin it.

// deferredTurnGrace bounds how long a deferred turn waits for its caller.
const deferredTurnGrace = 100 * time.Microsecond

// deferSweep is a System seen as the target of its sweep timer.
type deferSweep System

// deferrable returns the cell of pid when a turn of it may be deferred
// now: a local actor of the shared pool, the system clock, no worker of
// the process active and the slot free. When the slot holds another
// actor, it hands that one to the pool and returns nil: the caller has
// two actors working for it, which must run in parallel, and deferring
// the second would run it on the caller only after the first.
func (s *System) deferrable(pid *PID) *cell {
	var c *cell
	if pid != nil {
		c = pid.local.Load()
	}
	if s.deferred.Load() != nil {
		s.releaseSlot(c)
		return nil
	}
	co := s.coord
	if co == nil || !s.realClock || c == nil || c.mb.Dispatcher() != s.dispatcher ||
		!co.CallerTurnAllowed() {
		return nil
	}
	return c
}

// deferTurn parks c, whose mailbox the caller has claimed, in the slot, or
// hands it to the pool when the slot is taken. owner is the future whose
// waiter may run the turn (runTurn); nil for a spawn's turn, which only
// a request or stop that joins it gives an owner.
func (s *System) deferTurn(c *cell, owner *Future) {
	if !s.deferred.CompareAndSwap(nil, c) {
		s.coord.Schedule(c)
		return
	}
	s.deferredFor.Store(owner)
	if !s.sweepArmed.Load() && !s.sweepArmed.Swap(true) {
		if !s.tq.arm(&s.sweep, s.deferGrace, 0) { // shutting down: no sweep
			s.sweepArmed.Store(false)
			s.releaseDeferred(nil)
		}
	}
}

// releaseDeferred hands the deferred turn to the pool unless it is keep's
// (nil keeps none). Inlined, it is one atomic load when the slot is empty,
// so the root context calls it on every operation (Send included).
func (s *System) releaseDeferred(keep *cell) {
	if s.deferred.Load() != nil {
		s.releaseSlot(keep)
	}
}

func (s *System) releaseSlot(keep *cell) {
	if c := s.deferred.Load(); c != nil && c != keep && s.deferred.CompareAndSwap(c, nil) {
		s.coord.Schedule(c)
	}
}

// takeDeferred removes c from the slot; true when it was there, and the
// caller now holds its scheduled status.
func (s *System) takeDeferred(c *cell) bool {
	return c != nil && s.deferred.Load() == c && s.deferred.CompareAndSwap(c, nil)
}

// spawnStart hands a root spawn's actor, whose Started spawn queued with
// its mailbox claimed, to the deferred slot when its turn can wait for the
// caller, else to its dispatcher.
func (s *System) spawnStart(c *cell) {
	if s.deferrable(c.selfPID()) != nil {
		s.deferTurn(c, nil)
		return
	}
	c.mb.Dispatcher().Schedule(c)
}

// postDeferrable posts the system message e of the stop future f to c
// from the root context: it joins c's deferred turn when c has one that
// holds no user message, defers c's turn when it can, and posts as usual
// otherwise.
func (s *System) postDeferrable(c *cell, e envelope, f *Future) {
	if s.deferred.Load() == c && c.mb.UserBacklog() > 0 {
		// The turn holds another caller's request: joined, this stop's
		// Wait would run that message first (as for a request,
		// sendDeferred). Both go to the pool.
		s.releaseSlot(nil)
	}
	switch {
	case s.deferred.Load() == c:
		c.mb.PostSystem(nil, e) // the mailbox is claimed: the post only queues
		if s.deferred.Load() == c {
			s.deferredFor.Store(f)
		}
	case s.deferrable(c.selfPID()) != nil:
		if c.mb.PostSystemClaim(e) {
			s.deferTurn(c, f)
		}
	default:
		c.mb.PostSystem(nil, e)
	}
}

// sendDeferred is send for RootContext.RequestFuture: it defers the
// target's turn when it can, joins the target's deferred turn when it has
// one, and sends as usual otherwise. The turn it defers or joins is turn's
// to run (f itself, or the future a warm cluster call hands its caller).
func (s *System) sendDeferred(f, turn *Future, pid *PID, msg any) {
	if pid == nil {
		s.releaseDeferred(nil)
		s.send(nil, pid, msg, &f.pidv) // fails f with ErrNilPID
		return
	}
	if c := pid.local.Load(); c != nil && s.deferred.Load() == c && f.state.Load() == 0 {
		if c.mb.UserBacklog() > 0 {
			// The deferred turn holds another caller's message (an earlier
			// RequestFuture): joined, this request's Result would run that
			// message first on its caller, past its own timeout
			// (TestNewuser9ResultTimeoutNotHeldByAnotherRequestsMessage).
			// Both go to the pool, in parallel with their callers.
			s.releaseSlot(nil)
		}
		s.send(nil, pid, msg, &f.pidv) // claimed: the post only queues; else as usual
		if s.deferred.Load() == c {
			s.deferredFor.Store(turn) // joined: this request's turn now
		}
		return
	}
	c := s.deferrable(pid)
	if c == nil || f.state.Load() != 0 {
		s.send(nil, pid, msg, &f.pidv)
		return
	}
	claimed, err := c.mb.PostUserClaim(envelope{msg: msg, sender: &f.pidv})
	if err != nil {
		s.deadLetter(c.selfPID(), msg, &f.pidv, ErrMailboxFull)
	}
	if claimed {
		s.deferTurn(c, turn)
	}
}

// fireTimer implements timerTarget: the sweep.
func (d *deferSweep) fireTimer() {
	s := (*System)(d)
	s.sweepArmed.Store(false)
	if c := s.deferred.Swap(nil); c != nil {
		s.coord.Schedule(c)
	}
}

// turnCell returns the actor whose turn f may run: the target of its
// request or stop, when local.
func (f *Future) turnCell() *cell {
	if f.target == nil {
		return nil
	}
	return f.target.local.Load()
}

// hasTurn reports whether f's target waits in the deferred slot.
func (f *Future) hasTurn() bool {
	c := f.turnCell()
	return c != nil && f.sys.deferred.Load() == c
}

// releaseTurn hands f's target's deferred turn, if it has one, to the pool.
func (f *Future) releaseTurn() {
	if c := f.turnCell(); f.sys.takeDeferred(c) {
		f.sys.coord.Schedule(c)
	}
}

// runTurn runs f's target's deferred turn, if it has one, on the caller,
// who waits for f next, or hands it to the pool when a caller turn is not
// allowed now.
func (f *Future) runTurn() {
	if !f.hasTurn() {
		return
	}
	s := f.sys
	if f.state.Load() != 0 {
		// Completed: the deferred turn is someone else's; nothing here
		// waits for it (TestReview12ResultOfACompletedFutureDoesNotRunAnotherRequest).
		return
	}
	if s.deferredFor.Load() != f {
		// The turn is another caller's (its request, or a spawn nobody
		// joined): run here, its message would come first and one that
		// blocks would hold this caller past its deadline
		// (TestReview12ResultContextOfAPendingFutureKeepsItsDeadline). It
		// goes to the pool; this future waits.
		f.releaseTurn()
		return
	}
	if !s.coord.BeginCallerTurn() {
		f.releaseTurn()
		return
	}
	if c := f.turnCell(); s.takeDeferred(c) {
		s.coord.RunCallerTurn(c)
	}
	s.coord.EndCallerTurn()
}
