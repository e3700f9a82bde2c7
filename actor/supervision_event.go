package actor

import "time"

// SupervisionEvent is published on the EventStream when a supervisor has
// acted on a failed child: which actor failed, why, and what its parent's
// strategy did about it (Resume, Restart, Stop or Escalate). A failure is
// also counted (fraktor.actor.failures) and logged at Warn; the event is
// for code that reacts to it (an alert, a test that waits for a restart, a
// dashboard), as Proto.Actor's SupervisorEvent and Hollywood's restart
// events are.
//
// It is published once per failure, after the strategy has run, for the
// failed child only (an AllForOne restart of the siblings publishes one
// event, naming the child that failed). A strategy of your own that does
// nothing about the child publishes nothing. A Restart that a limit turned
// into a Stop says Stop; ExponentialBackoff's delayed restart says Restart
// with After set; an Escalate past a guardian, which stops the top-level
// actor, says Stop.
type SupervisionEvent struct {
	Child      *PID      // the failed actor
	Supervisor *PID      // its parent, whose strategy decided
	Err        error     // the failure (*PanicError for a panic)
	Directive  Directive // what the strategy did to Child
	// Consecutive counts the child's failures without a successful
	// message in between, starting at 1.
	Consecutive int
	// After is the delay of a delayed restart (RestartChildrenAfter), 0
	// otherwise.
	After time.Duration
}

// decisionRecorder is the Supervisor a strategy acts on when someone
// subscribes to the EventStream: the parent's cell, noting what the
// strategy does to the failed child for its SupervisionEvent.
type decisionRecorder struct {
	*cell
	child   *PID
	d       Directive
	after   time.Duration
	decided bool
}

func (r *decisionRecorder) note(d Directive, after time.Duration, pids []*PID) {
	if r.decided {
		return
	}
	for _, p := range pids {
		if p.Equal(r.child) {
			r.d, r.after, r.decided = d, after, true
			return
		}
	}
}

func (r *decisionRecorder) ResumeChildren(pids ...*PID) {
	r.note(ResumeDirective, 0, pids)
	r.cell.ResumeChildren(pids...)
}

func (r *decisionRecorder) RestartChildren(pids ...*PID) {
	r.note(RestartDirective, 0, pids)
	r.cell.RestartChildren(pids...)
}

func (r *decisionRecorder) RestartChildrenAfter(d time.Duration, pids ...*PID) {
	r.note(RestartDirective, d, pids)
	r.cell.RestartChildrenAfter(d, pids...)
}

func (r *decisionRecorder) StopChildren(pids ...*PID) {
	r.note(StopDirective, 0, pids)
	r.cell.StopChildren(pids...)
}

func (r *decisionRecorder) Escalate(f Failure) {
	if !r.decided {
		r.d, r.decided = EscalateDirective, true
		if r.sys.isGuardian(r.cell) { // a guardian stops the actor instead (cell.Escalate)
			r.d = StopDirective
		}
	}
	r.cell.Escalate(f)
}
