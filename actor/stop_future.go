package actor

import "github.com/fraktor-go/fraktor/scheduler"

// StopFuture on a local actor sends one system message that both stops the
// actor and names the waiter, instead of a Watch followed by a Stop, and the
// message and the Terminated it answers with live in the future's own
// allocation. Against Watch + Stop that saves, per synchronous stop: the
// Watch, the TerminatedSystem, the cell's side state for the watcher list,
// and the system queue's first segment (Started and the stop fit the
// queue's two inline slots; Started, Watch and Stop did not). An actor
// without children stops inside the handling of the message, so the waiter
// is told directly and never enters the watcher list; one that must wait
// for its children lists it like any watcher. Remote PIDs and custom
// processes get Watch and Stop, which they understand. From the root
// context, the stop joins or defers the actor's turn (future_deferred.go):
// a Spawn followed by StopFuture(pid).Wait() with the pool idle runs the
// whole life on the caller.
// TestStopFutureAllocs pins the count.

// stopWatchMsg stops its receiver and tells watcher when it has stopped.
// Exactly one cell handles it (or its sink, once the cell has stopped),
// which writes term and sends it to watcher: the message is never shared.
type stopWatchMsg struct {
	watcher *PID
	term    TerminatedSystem
}

func (*stopWatchMsg) systemMessage() {}

// stopFuture is a StopFuture's future and its message in one allocation.
type stopFuture struct {
	Future
	msg stopWatchMsg
}

// stopFuture stops pid and returns a future completed with *Terminated when
// it has stopped.
func (s *System) stopFuture(pid *PID) *Future {
	if pid == nil {
		return s.failedFuture(ErrNilPID)
	}
	var c *cell
	if p := s.resolve(pid); p != nil {
		c, _ = p.(*cell)
	}
	if c == nil {
		s.releaseDeferred(nil)
		f := s.newFuture(nil, 0)
		s.sendSystem(nil, pid, &Watch{Watcher: &f.pidv})
		s.sendSystem(nil, pid, stopSys)
		return f
	}
	// The future's target is the actor, so that its Wait may run the
	// actor's deferred turn (future_deferred.go); its done channel is made
	// only if a waiter has to wait.
	sf := &stopFuture{}
	f := s.startFuture(&sf.Future, pid, 0)
	sf.msg.watcher = &f.pidv
	s.postDeferrable(c, envelope{msg: &sf.msg}, f)
	return f
}

// stopAndTell handles a stopWatchMsg: the stop, then the answer, at once
// when the stop completed here, or through the watcher list when the actor
// still waits for its children.
func (c *cell) stopAndTell(m *stopWatchMsg) {
	c.beginStop()
	if c.state == stateStopped {
		c.tellStopped(c.worker, m)
		return
	}
	c.addWatcher(m.watcher)
}

// tellStopped answers m: c has stopped. w is the caller's worker (nil off
// c's own invocation: the sink runs on the sender's goroutine).
func (c *cell) tellStopped(w *scheduler.Worker, m *stopWatchMsg) {
	m.term.Terminated = Terminated{Who: c.selfPID(), Why: TerminatedStopped}
	c.sys.sendSystem(w, m.watcher, &m.term)
}

// failedFuture returns a future that has failed with err: the answer to a
// stop of a nil PID, which no process would ever answer.
func (s *System) failedFuture(err error) *Future {
	s.releaseDeferred(nil)
	f := s.newFuture(nil, 0)
	f.complete(nil, err)
	return f
}
