// Package middleware provides the standard scheduler middlewares that wrap
// every mailbox batch (requirements S4, S7, S8): [Telemetry] records
// OpenTelemetry metrics, [Logging] writes structured Debug records through
// log/slog, and [RateLimit] holds an actor to a number of messages per
// second with a token bucket.
//
// Each implements scheduler.Middleware and is composed with others by
// scheduler.CompositeMiddleware (before in registration order, after in
// reverse). An invoker calls BeforeInvoke and AfterInvoke on the worker that
// runs the batch, never concurrently for the same invoker; all three
// middlewares are nevertheless safe for concurrent use, so one instance may
// be added to many invokers running on different workers. Sharing a
// RateLimit shares its budget (see its documentation).
//
// The middlewares talk to the invoker through the InvokeContext metadata:
//
//   - scheduler.MetaResumeAfter (time.Duration): set by RateLimit with Break;
//     the invoker returns Suspended{RateLimit, After(d)}.
//   - [MetaBatchLimit] (int): set by RateLimit; the invoker processes at most
//     that many user messages in the batch and reports the count in
//     InvokeContext.Processed.
//   - scheduler.MetaLogID ([LogID]): set by Logging when it logs.
//
// Time is read from an injected scheduler.Clock, which must be the
// executor's clock, so that a test driving a scheduler.ManualClock gets the
// same durations, waits and token counts on every run.
package middleware
