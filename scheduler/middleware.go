package scheduler

import "time"

// ControlFlow is a middleware's verdict before an invocation.
type ControlFlow uint8

const (
	// Continue runs the next middleware, then the batch.
	Continue ControlFlow = iota
	// Break skips the batch: the invoker returns Suspended{RateLimit,
	// After(d)} where d is MetaResumeAfter in the metadata, or
	// DefaultBreakResume (S4).
	Break
)

// Metadata keys shared by the standard middlewares.
const (
	// MetaResumeAfter (time.Duration): how long a Break suspends the mailbox.
	MetaResumeAfter = "fraktor.resume_after"
	// MetaLogID (middleware.LogID, a number; String formats it): a
	// per-invocation id set by the Logging middleware.
	MetaLogID = "fraktor.log_id"
	// MetaTraceID (string): a trace id for telemetry.
	MetaTraceID = "fraktor.trace_id"
	// MetaBatchLimit (int) caps the user messages of the current invocation:
	// the invoker processes at most min(throughput hint, limit) and reports
	// how many in InvokeContext.Processed. System messages are not capped.
	// A limit of 0 holds the user messages back as a Break does.
	MetaBatchLimit = "fraktor.batch_limit"
)

// DefaultBreakResume is the suspension after a Break without MetaResumeAfter.
const DefaultBreakResume = 100 * time.Millisecond

// InvokeContext is what middlewares see of one invocation (S5). The invoker
// owns it and reuses it between invocations; a middleware must not keep it
// after AfterInvoke returns.
type InvokeContext struct {
	Index          MailboxIndex
	ThroughputHint int
	// Start is the invocation start time on the executor's clock.
	Start time.Time
	// Processed is the number of user messages the batch processed
	// (valid in AfterInvoke).
	Processed int
	meta      map[string]any
}

// Set stores a metadata value for the middlewares that follow.
func (c *InvokeContext) Set(key string, v any) {
	if c.meta == nil {
		c.meta = make(map[string]any, 4)
	}
	c.meta[key] = v
}

// Get returns a metadata value.
func (c *InvokeContext) Get(key string) (any, bool) {
	v, ok := c.meta[key]
	return v, ok
}

// Reset prepares the context for the next invocation, keeping its storage.
func (c *InvokeContext) Reset(idx MailboxIndex, hint int, start time.Time) {
	c.Index, c.ThroughputHint, c.Start, c.Processed = idx, hint, start, 0
	clear(c.meta)
}

// ResumeAfter returns MetaResumeAfter, or DefaultBreakResume.
func (c *InvokeContext) ResumeAfter() time.Duration {
	if v, ok := c.meta[MetaResumeAfter].(time.Duration); ok && v > 0 {
		return v
	}
	return DefaultBreakResume
}

// Middleware wraps every invocation of an invoker (S3, S4, S8).
//
// Both methods run on the worker that runs the invocation, must not block, and
// are never called concurrently for the same invoker. AfterInvoke runs on
// every path, including a Break and a failure.
type Middleware interface {
	BeforeInvoke(ctx *InvokeContext) ControlFlow
	AfterInvoke(ctx *InvokeContext, result InvokeResult)
}

// CompositeMiddleware runs its members' BeforeInvoke in registration order and
// their AfterInvoke in reverse order (S8). If a member breaks, the members
// after it are not asked, and AfterInvoke runs for the members that were.
// If a member's AfterInvoke panics, the members before it still get theirs
// and the panic goes on to the invoker; a panic in BeforeInvoke ends the
// chain there, and AfterInvoke runs for the members asked, the panicking
// one included. A composite keeps per-invocation state: it belongs to one
// invoker.
type CompositeMiddleware struct {
	members []Middleware
	entered int
}

// NewComposite composes middlewares; nil ones are left out.
func NewComposite(ms ...Middleware) *CompositeMiddleware {
	c := &CompositeMiddleware{members: make([]Middleware, 0, len(ms))}
	for _, m := range ms {
		c.Add(m)
	}
	return c
}

// Add appends a middleware; a nil one is ignored. (A factory that returns
// nil for "no middleware here" would otherwise make every invocation of
// its invoker panic: TestCompositeIgnoresNil.)
func (c *CompositeMiddleware) Add(m Middleware) {
	if m == nil {
		return
	}
	c.members = append(c.members, m)
}

// Len returns the number of members.
func (c *CompositeMiddleware) Len() int { return len(c.members) }

// BeforeInvoke implements Middleware.
func (c *CompositeMiddleware) BeforeInvoke(ctx *InvokeContext) ControlFlow {
	c.entered = 0
	for _, m := range c.members {
		c.entered++
		if m.BeforeInvoke(ctx) == Break {
			return Break
		}
	}
	return Continue
}

// AfterInvoke implements Middleware.
func (c *CompositeMiddleware) AfterInvoke(ctx *InvokeContext, result InvokeResult) {
	// A member that panics must not cost the members before it their
	// AfterInvoke ("on every path"): a RateLimit registered first would
	// take no tokens for the batch, and the actor, restarted by the
	// failure, would run unlimited (TestCompositeAfterInvokePanicRunsTheRest).
	// The deferred call runs them while the panic unwinds, without
	// recovering it; entered counts down, so it knows where to go on.
	defer c.afterRest(ctx, &result)
	for c.entered > 0 {
		c.entered--
		c.members[c.entered].AfterInvoke(ctx, result)
	}
}

// afterRest goes on with AfterInvoke after a member panicked.
func (c *CompositeMiddleware) afterRest(ctx *InvokeContext, result *InvokeResult) {
	if c.entered > 0 {
		c.AfterInvoke(ctx, *result)
	}
}
