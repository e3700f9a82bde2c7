package scheduler

// MailboxIndex identifies a mailbox for diagnostics and metrics. It is unique
// within one system for the life of the mailbox.
type MailboxIndex uint64

// MessageInvoker runs the messages of one mailbox (S1).
//
// InvokeBatch is called by one worker at a time, never concurrently for the
// same invoker; it must not block. It processes system messages first and
// then at most throughputHint user messages, inside the middleware chain, and
// reports what the executor should do next through the returned InvokeResult.
//
// AddMiddleware must be called before the invoker is first scheduled; the
// chain is fixed afterwards.
type MessageInvoker interface {
	InvokeBatch(throughputHint int) InvokeResult
	MailboxIndex() MailboxIndex
	AddMiddleware(m Middleware)
}

// Runnable is what a ready queue holds: an invoker together with the
// scheduling status of its mailbox.
//
// The executor calls BindWorker with the executing worker just before each
// InvokeBatch (nil when the executor has no worker identity, as the Manual
// executor), so that messages sent during the batch can be scheduled on that
// worker next. After a result that leaves the runnable without work
// (Completed{ReadyHint:false}, Suspended with an external resume, Failed) the
// executor calls SetIdle; SetIdle marks the mailbox idle and reports true
// when work arrived meanwhile and the runnable re-claimed its scheduled
// status, in which case the executor runs it again.
//
// After Suspended with ResumeAfter(d) the executor calls Defer and arms a
// timer; when it fires the executor calls Wake and runs the runnable if Wake
// reports true. A deferred mailbox is not scheduled by user posts but is by
// system posts (a Stop must not wait for a rate limit), so Wake reports false
// when a system post got there first; Defer itself schedules the runnable
// when a system post arrived after the invocation emptied its system
// queue and before the deferral. All methods are called by the executor
// only, one call at a time, except Wake, which the timer calls.
type Runnable interface {
	MessageInvoker
	BindWorker(w *Worker)
	SetIdle() bool
	Defer()
	Wake() bool
}

// Dispatcher accepts runnables that became ready.
//
// Schedule may be called from any goroutine and never blocks. ScheduleFrom is
// the same, called by code running inside an invocation on worker w (w may be
// nil): a dispatcher that owns w may run r next on that worker without waking
// another one, which is what makes an actor-to-actor round trip cheap.
type Dispatcher interface {
	Schedule(r Runnable)
	ScheduleFrom(w *Worker, r Runnable)
}
