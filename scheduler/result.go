package scheduler

import (
	"fmt"
	"time"
)

// ResultKind tells the variants of InvokeResult apart (S2).
type ResultKind uint8

const (
	// ResultCompleted: the batch ended; ReadyHint says whether messages remain.
	ResultCompleted ResultKind = iota
	// ResultYielded: the throughput hint was reached; run again later.
	ResultYielded
	// ResultSuspended: the mailbox must not run until ResumeOn.
	ResultSuspended
	// ResultFailed: the actor failed; the supervision path has been notified.
	ResultFailed
	// ResultStopped: the actor stopped; the executor drops the runnable.
	ResultStopped
)

func (k ResultKind) String() string {
	switch k {
	case ResultCompleted:
		return "Completed"
	case ResultYielded:
		return "Yielded"
	case ResultSuspended:
		return "Suspended"
	case ResultFailed:
		return "Failed"
	case ResultStopped:
		return "Stopped"
	}
	return fmt.Sprintf("ResultKind(%d)", uint8(k))
}

// SuspendReason says why an invocation was suspended.
type SuspendReason uint8

const (
	// ReasonActor: the actor is suspended (supervision awaits a directive).
	ReasonActor SuspendReason = iota
	// ReasonRateLimit: a middleware broke the invocation (S4).
	ReasonRateLimit
	// ReasonBackpressure: downstream asked to slow down.
	ReasonBackpressure
)

func (r SuspendReason) String() string {
	switch r {
	case ReasonActor:
		return "Actor"
	case ReasonRateLimit:
		return "RateLimit"
	case ReasonBackpressure:
		return "Backpressure"
	}
	return fmt.Sprintf("SuspendReason(%d)", uint8(r))
}

// ResumeCondition says when a suspended runnable runs again: after a delay
// (After > 0) or when something external schedules it (a system message).
type ResumeCondition struct {
	After time.Duration
}

// ResumeAfter resumes the runnable after d on the executor's clock.
func ResumeAfter(d time.Duration) ResumeCondition { return ResumeCondition{After: d} }

// ResumeExternal waits for an external schedule (for example a Resume system message).
func ResumeExternal() ResumeCondition { return ResumeCondition{} }

// External reports whether the condition waits for an external schedule.
func (c ResumeCondition) External() bool { return c.After <= 0 }

// InvokeResult is what an invocation tells the executor (S2). It is a plain
// value: building and returning one allocates nothing.
type InvokeResult struct {
	Kind       ResultKind
	ReadyHint  bool            // Completed: messages remain
	Reason     SuspendReason   // Suspended
	ResumeOn   ResumeCondition // Suspended
	Err        error           // Failed
	RetryAfter time.Duration   // Failed: backoff from the consecutive-failure count (S6)
}

// Completed ends a batch; readyHint is true when messages remain.
func Completed(readyHint bool) InvokeResult {
	return InvokeResult{Kind: ResultCompleted, ReadyHint: readyHint}
}

// Yielded reports that the throughput hint was reached.
func Yielded() InvokeResult { return InvokeResult{Kind: ResultYielded} }

// Suspended reports a suspension with its reason and resume condition.
func Suspended(reason SuspendReason, on ResumeCondition) InvokeResult {
	return InvokeResult{Kind: ResultSuspended, Reason: reason, ResumeOn: on}
}

// Failed reports an actor failure and the backoff before a retry.
func Failed(err error, retryAfter time.Duration) InvokeResult {
	return InvokeResult{Kind: ResultFailed, Err: err, RetryAfter: retryAfter}
}

// Stopped reports that the actor has stopped for good.
func Stopped() InvokeResult { return InvokeResult{Kind: ResultStopped} }

func (r InvokeResult) String() string {
	switch r.Kind {
	case ResultCompleted:
		return fmt.Sprintf("Completed{ReadyHint:%t}", r.ReadyHint)
	case ResultSuspended:
		if r.ResumeOn.External() {
			return fmt.Sprintf("Suspended{%s, External}", r.Reason)
		}
		return fmt.Sprintf("Suspended{%s, After(%s)}", r.Reason, r.ResumeOn.After)
	case ResultFailed:
		return fmt.Sprintf("Failed{%v, RetryAfter:%s}", r.Err, r.RetryAfter)
	}
	return r.Kind.String()
}

// Backoff returns the S6 retry delay for the n-th consecutive failure
// (n starting at 0): 100 ms × 2^n, capped at 10 s.
func Backoff(n int) time.Duration {
	const base, limit = 100 * time.Millisecond, 10 * time.Second
	if n < 0 {
		n = 0
	}
	if n >= 7 { // 100ms<<7 = 12.8s > cap
		return limit
	}
	return min(base<<n, limit)
}
