package scheduler

// FailureHook observes Failed results. The invoker has already notified the
// supervision path (S6); the hook is for the executor's owner (the Guardian
// bookkeeping, metrics). It runs on the worker and must not block.
type FailureHook func(r Runnable, res InvokeResult)

// action is what an executor does with a runnable after an invocation.
type action uint8

const (
	actDone    action = iota // nothing: idle, waiting, or dropped
	actRequeue               // run it again after the others that are ready
)

// settle applies S9 to one result; it is shared by the Coordinator and the
// Manual executor so both act alike.
func settle(r Runnable, res InvokeResult, clock Clock, resume func(Runnable), hook FailureHook, timers *TimerSet) action {
	switch res.Kind {
	case ResultYielded:
		return actRequeue
	case ResultCompleted:
		if res.ReadyHint || r.SetIdle() {
			return actRequeue
		}
		return actDone
	case ResultSuspended:
		if !res.ResumeOn.External() {
			// Deferred: user posts do not schedule it, a system post or the
			// timer does, whichever comes first.
			r.Defer()
			timers.after(clock, res.ResumeOn.After, r, resume)
			return actDone
		}
		if r.SetIdle() {
			return actRequeue
		}
		return actDone
	case ResultFailed:
		if hook != nil {
			hook(r, res)
		}
		if r.SetIdle() {
			return actRequeue
		}
		return actDone
	case ResultStopped:
		return actDone
	}
	return actDone
}
