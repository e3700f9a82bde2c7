package middleware

import (
	"fmt"
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/fraktor-go/fraktor/scheduler"
)

// RateLimitConfig configures a [RateLimit].
type RateLimitConfig struct {
	// PerSecond is the sustained number of user messages per second;
	// +Inf disables the limit.
	PerSecond float64
	// Burst is the bucket size: how many messages may be processed at
	// once after the mailbox has been quiet. At least 1.
	Burst int
}

// DefaultRateLimitConfig returns 1000 messages per second with a burst of 100.
func DefaultRateLimitConfig() RateLimitConfig {
	return RateLimitConfig{PerSecond: 1000, Burst: 100}
}

// Validate reports ErrInvalidRate or ErrInvalidBurst.
func (c RateLimitConfig) Validate() error {
	if math.IsNaN(c.PerSecond) || c.PerSecond <= 0 {
		return fmt.Errorf("%w (got %v)", ErrInvalidRate, c.PerSecond)
	}
	if c.Burst < 1 {
		return fmt.Errorf("%w (got %d)", ErrInvalidBurst, c.Burst)
	}
	return nil
}

// RateLimit limits the user messages processed per second with a token bucket
// (golang.org/x/time/rate) read at times from an injected clock (S4, S8).
//
// What is limited is messages, not invocations: one token is one user
// message. BeforeInvoke looks at the tokens available now:
//
//   - none (less than one): it stores the wait until one token is available
//     under scheduler.MetaResumeAfter and returns Break, so the invoker
//     returns Suspended{RateLimit, After(wait)} and the executor resumes the
//     mailbox when the token is there;
//   - k ≥ 1: it caps the batch at k messages with [MetaBatchLimit] (only
//     when k is below the throughput hint) and continues.
//
// AfterInvoke takes exactly ctx.Processed tokens, at the time the batch
// ended. Tokens are therefore taken for what was processed, not for what was
// allowed, and nothing has to be handed back: a batch cut short by an empty
// mailbox costs only what it used. With an invoker that honours
// MetaBatchLimit and a mailbox that always has work, a RateLimit of N/s with
// burst B lets through exactly B + ⌊N·t⌋ messages in the first t seconds
// (up to float rounding, absorbed by a tolerance of one nanosecond's worth
// of tokens), provided the executor runs each resume when it falls due.
//
// If the invoker ignores MetaBatchLimit, or several invokers share one
// RateLimit and overdraw it concurrently, the extra messages are taken as
// debt (the bucket goes negative) and the next waits are longer by as much:
// the long-run rate is still exactly N/s, only smoothness suffers.
//
// One RateLimit is one bucket. Give each invoker its own RateLimit to limit
// each actor to N/s; share one between invokers to limit them together. Both
// are safe: the bucket is protected by the limiter's lock, and no
// per-invocation state is kept in the middleware. System messages are not
// limited.
//
// BeforeInvoke and AfterInvoke allocate nothing, except that storing the
// wait on a Break and a batch limit of 256 or more box a value into the
// metadata.
type RateLimit struct {
	lim       *rate.Limiter
	clock     scheduler.Clock
	perSecond float64
	burst     int
	eps       float64 // tokens accrued in one nanosecond: rounding slack
	unlimited bool
}

// NewRateLimit returns a RateLimit for cfg. clock must be the executor's
// clock, the one resume timers run on (a scheduler.ManualClock in tests);
// nil means scheduler.SystemClock. The bucket starts full.
func NewRateLimit(cfg RateLimitConfig, clock scheduler.Clock) (*RateLimit, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if clock == nil {
		clock = scheduler.SystemClock{}
	}
	r := &RateLimit{clock: clock, perSecond: cfg.PerSecond, burst: cfg.Burst}
	if math.IsInf(cfg.PerSecond, 1) {
		r.unlimited = true
		r.lim = rate.NewLimiter(rate.Inf, cfg.Burst)
		return r, nil
	}
	r.lim = rate.NewLimiter(rate.Limit(cfg.PerSecond), cfg.Burst)
	r.lim.SetBurstAt(clock.Now(), cfg.Burst) // anchors the full bucket at the clock's now
	r.eps = math.Max(cfg.PerSecond/float64(time.Second), 1e-9)
	return r, nil
}

// Tokens returns the tokens available now (negative while in debt; Burst
// when the limit is infinite). It is for diagnostics and tests.
func (r *RateLimit) Tokens() float64 {
	if r.unlimited {
		return float64(r.burst)
	}
	return r.lim.TokensAt(r.clock.Now())
}

// BeforeInvoke implements scheduler.Middleware.
func (r *RateLimit) BeforeInvoke(ctx *scheduler.InvokeContext) scheduler.ControlFlow {
	if r.unlimited {
		return scheduler.Continue
	}
	tokens := r.lim.TokensAt(r.clock.Now())
	avail := math.Floor(tokens + r.eps)
	if avail < 1 {
		ctx.Set(scheduler.MetaResumeAfter, waitFor(1-tokens, r.perSecond))
		return scheduler.Break
	}
	// Compared as floats and capped before the conversion: a bucket beyond
	// the int range (a huge Burst, or a huge rate's eps) converted first
	// became a negative limit, that is 0, and the mailbox was held back on
	// every turn (TestRateLimit_HugeBucketDoesNotHoldBack).
	if hint := ctx.ThroughputHint; hint <= 0 || avail < float64(hint) {
		LimitBatch(ctx, int(min(avail, maxBatchLimit)))
	}
	return scheduler.Continue
}

// maxBatchLimit caps the batch limit RateLimit sets; no batch comes near it.
const maxBatchLimit = math.MaxInt32

// waitFor returns how long n tokens take to accrue at perSecond, at least
// 1 ns and at most the longest time.Duration. The cap matters: converted
// unchecked, a wait beyond the Duration range (a rate below about 1e-10
// per second, or a deep debt) became negative, then 1 ns, and the mailbox
// was resumed every nanosecond (TestRateLimit_TinyRateWaitsLong).
func waitFor(n, perSecond float64) time.Duration {
	ns := math.Round(n / perSecond * float64(time.Second))
	if ns >= math.MaxInt64 {
		return math.MaxInt64
	}
	return max(time.Duration(ns), time.Nanosecond)
}

// AfterInvoke implements scheduler.Middleware: it takes ctx.Processed tokens.
func (r *RateLimit) AfterInvoke(ctx *scheduler.InvokeContext, _ scheduler.InvokeResult) {
	n := ctx.Processed
	if n <= 0 || r.unlimited {
		return
	}
	now := r.clock.Now()
	if r.lim.AllowN(now, n) {
		return
	}
	// Fewer tokens than processed (rounding slack, an invoker that ignored
	// the batch limit, or a shared bucket overdrawn): go into debt. The
	// limiter reserves at most burst tokens per call.
	for n > 0 {
		k := min(n, r.burst)
		r.lim.ReserveN(now, k)
		n -= k
	}
}
