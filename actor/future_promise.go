package actor

import "time"

// NewFuture returns a future that completes when Complete is called, or with
// ErrTimeout after timeout (none when timeout ≤ 0), or with ErrSystemStopped
// when the system shuts down before either while a timeout is pending. It is for code that
// produces a result asynchronously on behalf of a caller, as the cluster
// context does for RequestFuture; its PID may also be used as a sender.
func (r *RootContext) NewFuture(timeout time.Duration) *Future { return r.sys.newFuture(nil, timeout) }

// Complete completes f with (v, err) unless it has completed already.
func (f *Future) Complete(v any, err error) { f.complete(v, err) }
