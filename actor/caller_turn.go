package actor

// sendAndRun is send for the root context's Request, whose caller blocks
// on the answer right after: when the target is a local actor of the
// shared pool, the pool is idle and the post makes the actor runnable, the
// caller runs the actor's turn itself (a scheduler caller turn; see
// scheduler/caller_turn.go for the rules) instead of waking a worker and
// waiting to be woken. Actors on a dedicated dispatcher (WithDispatcher,
// WithBlocking) and systems with an external dispatcher always go through
// their dispatcher. A turn on the caller cannot be interrupted by the
// request's context: the answer arrives when the turn ends.
// TestRequestCallerTurn* pin it.
func (s *System) sendAndRun(pid *PID, msg any, sender *PID) {
	co := s.coord
	var c *cell
	if pid != nil { // a nil one fails the request in send (ErrNilPID)
		c = pid.local.Load()
	}
	s.releaseDeferred(c)
	if co == nil || c == nil || c.mb.Dispatcher() != s.dispatcher || !co.BeginCallerTurn() {
		s.releaseDeferred(nil) // c's own deferred turn too: it cannot run here
		s.send(nil, pid, msg, sender)
		return
	}
	if s.deferred.Load() == c && c.mb.UserBacklog() > 0 {
		// c's turn is deferred with a message of another caller's in it
		// (an earlier RequestFuture): run here, that message would come
		// first, and one that blocks would hold this caller past ctx
		// (TestNewuser9ResultTimeoutNotHeldByAnotherRequestsMessage). The
		// turn goes to the pool; this request waits on its future.
		s.releaseDeferred(nil)
		s.send(nil, pid, msg, sender)
		co.EndCallerTurn()
		return
	}
	claimed, err := c.mb.PostUserClaim(envelope{msg: msg, sender: sender})
	if err != nil {
		s.deadLetter(c.selfPID(), msg, sender, ErrMailboxFull)
	}
	if !claimed {
		claimed = s.takeDeferred(c) // its spawn or an earlier request deferred it
	}
	if claimed {
		co.RunCallerTurn(c)
	}
	co.EndCallerTurn()
}
