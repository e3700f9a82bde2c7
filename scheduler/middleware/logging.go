package middleware

import (
	"context"
	"log/slog"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Logging writes a Debug record before and after every batch through an
// injected *slog.Logger (S8), tagged with a [LogID] that it also stores in
// the invocation's metadata under scheduler.MetaLogID, so that other
// middlewares can correlate their output with the pair of records.
//
// When the logger is not enabled for Debug (checked with Logger.Enabled on
// every call, so a slog.LevelVar can turn it on and off at run time),
// Logging does nothing at all: it draws no id, sets no metadata and
// allocates nothing. The id exists only to pair records, so an invocation
// that writes none gets none.
//
// Log ids come from one atomic counter per Logging (no package state): they
// are unique per Logging and increase in the order invocations begin. A
// Logging is safe for concurrent use and may be shared by every invoker.
type Logging struct {
	logger *slog.Logger
	clock  scheduler.Clock
	next   atomic.Uint64
}

// NewLogging returns a Logging middleware. A nil logger discards everything.
// clock (the executor's clock; nil means scheduler.SystemClock) measures the
// batch duration reported in the second record.
func NewLogging(logger *slog.Logger, clock scheduler.Clock) *Logging {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if clock == nil {
		clock = scheduler.SystemClock{}
	}
	return &Logging{logger: logger, clock: clock}
}

// BeforeInvoke implements scheduler.Middleware. It never breaks.
func (l *Logging) BeforeInvoke(ctx *scheduler.InvokeContext) scheduler.ControlFlow {
	bg := context.Background()
	if !l.logger.Enabled(bg, slog.LevelDebug) {
		return scheduler.Continue
	}
	id := LogID(l.next.Add(1))
	ctx.Set(scheduler.MetaLogID, id)
	l.logger.LogAttrs(bg, slog.LevelDebug, "invoke begin",
		slog.Uint64("mailbox", uint64(ctx.Index)),
		slog.Uint64("log_id", uint64(id)),
		slog.Int("throughput_hint", ctx.ThroughputHint))
	return scheduler.Continue
}

// AfterInvoke implements scheduler.Middleware. It writes the closing record
// only for an invocation whose opening record it wrote.
func (l *Logging) AfterInvoke(ctx *scheduler.InvokeContext, result scheduler.InvokeResult) {
	bg := context.Background()
	if !l.logger.Enabled(bg, slog.LevelDebug) {
		return
	}
	id, ok := LogIDOf(ctx)
	if !ok {
		return
	}
	var detail slog.Attr
	switch result.Kind {
	case scheduler.ResultCompleted:
		detail = slog.Bool("ready", result.ReadyHint)
	case scheduler.ResultSuspended:
		detail = slog.Group("suspend",
			slog.String("reason", result.Reason.String()),
			slog.Duration("resume_after", result.ResumeOn.After))
	case scheduler.ResultFailed:
		detail = slog.Group("failure",
			slog.Any("error", result.Err),
			slog.Duration("retry_after", result.RetryAfter))
	}
	attrs := [...]slog.Attr{
		slog.Uint64("mailbox", uint64(ctx.Index)),
		slog.Uint64("log_id", uint64(id)),
		slog.String("result", result.Kind.String()),
		slog.Int("processed", ctx.Processed),
		slog.Duration("duration", l.clock.Now().Sub(ctx.Start)),
		detail,
	}
	n := len(attrs)
	if detail.Key == "" {
		n--
	}
	l.logger.LogAttrs(bg, slog.LevelDebug, "invoke end", attrs[:n]...)
}
