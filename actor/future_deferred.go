package actor

import "time"

// Deferred turns: RequestFuture(...).Result() from outside runs the
// target's turn on the caller, as Request does (actor/caller_turn.go).
//
// RequestFuture cannot run the turn itself: its caller may go on with
// other work, or send more requests and then wait for them all, and those
// must run in parallel on the pool. So when the conditions of a caller turn
// hold (the process's workers are all parked, the target is an idle actor
// of the shared pool), RequestFuture claims the target's mailbox
// (PostUserClaim) and parks the request in the system's one deferred slot
// instead of waking a worker. Whoever comes first then takes it:
//
//   - Result, Wait or ResultContext (its context not ended) run the turn on
//     the caller when a caller turn is allowed at that moment, or hand it
//     to the pool;
//   - Done, PipeTo and the future's completion hand it to the pool;
//   - the sweep, a timer armed when the slot fills and none is armed, hands
//     whatever the slot holds to the pool when it fires, deferredTurnGrace
//     later: a future that nobody waits on delays its request by at most
//     that much (and the target's other messages, a Stop included, queued
//     behind it).
//
// One slot per system: a second request deferred while the slot is full
// goes to the pool as before. The sweep is a node of the system's timer
// queue, armed at most once per grace period however many requests pass,
// so a deferred request costs no timer of its own, and the Future no field.
// Only with the system clock: under a virtual clock the sweep would not
// fire unless a test moved the clock.
//
// TestRequestFutureDeferred* pin it.

// deferredTurnGrace bounds how long a deferred turn waits for its caller.
const deferredTurnGrace = 100 * time.Microsecond

// deferSweep is a System seen as the target of its sweep timer.
type deferSweep System

// sendDeferred is send for RootContext.RequestFuture: it defers the
// target's turn when it can, and sends as usual otherwise.
func (s *System) sendDeferred(f *Future, pid *PID, msg any) {
	co := s.coord
	c := pid.local.Load()
	if co == nil || !s.realClock || c == nil || c.mb.Dispatcher() != s.dispatcher ||
		!co.CallerTurnAllowed() || s.deferred.Load() != nil || f.state.Load() != 0 {
		s.send(nil, pid, msg, &f.pidv)
		return
	}
	claimed, err := c.mb.PostUserClaim(envelope{msg: msg, sender: &f.pidv})
	if err != nil {
		s.deadLetter(c.selfPID(), msg, &f.pidv, ErrMailboxFull)
	}
	if !claimed {
		return
	}
	if !s.deferred.CompareAndSwap(nil, f) {
		co.Schedule(c)
		return
	}
	if !s.sweepArmed.Load() && !s.sweepArmed.Swap(true) {
		if !s.tq.arm(&s.sweep, deferredTurnGrace, 0) { // shutting down: no sweep
			s.sweepArmed.Store(false)
			f.releaseTurn()
		}
	}
}

// fireTimer implements timerTarget: the sweep.
func (d *deferSweep) fireTimer() {
	s := (*System)(d)
	s.sweepArmed.Store(false)
	if f := s.deferred.Swap(nil); f != nil {
		s.coord.Schedule(f.target.local.Load())
	}
}

// releaseTurn hands f's deferred turn, if it has one, to the pool.
func (f *Future) releaseTurn() {
	s := f.sys
	if s.deferred.Load() == f && s.deferred.CompareAndSwap(f, nil) {
		s.coord.Schedule(f.target.local.Load())
	}
}

// runTurn runs f's deferred turn, if it has one, on the caller, who waits
// for f next, or hands it to the pool when a caller turn is not allowed now.
func (f *Future) runTurn() {
	s := f.sys
	if s.deferred.Load() != f {
		return
	}
	if !s.coord.BeginCallerTurn() {
		f.releaseTurn()
		return
	}
	if s.deferred.CompareAndSwap(f, nil) {
		s.coord.RunCallerTurn(f.target.local.Load())
	}
	s.coord.EndCallerTurn()
}
