package futurehook

import "time"

// Hook is told when a future made by Request completes. FutureCompleted is
// called once, by the completion that won, on the goroutine that completed
// the future (an actor's worker or a caller running the actor's turn, a
// remote reader, the timer queue, Shutdown), after the future's waiters
// have been released and its pipes sent: it must be cheap, must not block
// and must not panic. f is the *actor.Future, result and err its outcome.
type Hook interface {
	FutureCompleted(f, result any, err error)
}

// Funcs are package actor's implementations of Request and TurnFuture.
type Funcs struct {
	Request    func(root, pid, msg any, timeout time.Duration, h Hook, turn any) any
	TurnFuture func(root, target any) any
}

// funcs is set once, by Install in package actor's initialisation, before
// any other package's code runs.
var funcs Funcs

// Install sets the implementations. Package actor calls it when it is
// initialised; nothing else may.
func Install(f Funcs) { funcs = f }

// Request is (*actor.RootContext).RequestFuture(pid, msg, timeout) whose
// future calls h once it completes: root is an *actor.RootContext, pid an
// *actor.PID, the result an *actor.Future. h may be called before Request
// returns. turn, a future made by TurnFuture(root, pid) (or nil), is the
// one whose waiter may run the request's deferred turn, instead of the
// request's own future.
func Request(root, pid, msg any, timeout time.Duration, h Hook, turn any) any {
	return funcs.Request(root, pid, msg, timeout, h, turn)
}

// TurnFuture is (*actor.RootContext).NewFuture(0) (no timeout) whose
// Result, Wait and ResultContext run the deferred turn of target (an
// *actor.PID) on the caller, and whose Done, PipeTo and completion hand it
// to the pool, as a request future to target does. It is not a request to
// target: a node's failure (FailRequestsTo) does not fail it.
func TurnFuture(root, target any) any { return funcs.TurnFuture(root, target) }
