package middleware

import (
	"fmt"

	"github.com/fraktor-go/fraktor/scheduler"
)

// MetaBatchLimit is scheduler.MetaBatchLimit: when several middlewares
// limit the batch, each keeps the smaller value (see [LimitBatch]).
const MetaBatchLimit = scheduler.MetaBatchLimit

// BatchLimit returns the MetaBatchLimit of an invocation. The invoker calls
// it after the before-middlewares ran.
func BatchLimit(ctx *scheduler.InvokeContext) (int, bool) {
	v, ok := ctx.Get(MetaBatchLimit)
	if !ok {
		return 0, false
	}
	n, ok := v.(int)
	return n, ok
}

// LimitBatch lowers the MetaBatchLimit of an invocation to n (never raises
// it), so that several limiting middlewares compose. n < 0 counts as 0.
func LimitBatch(ctx *scheduler.InvokeContext, n int) {
	n = max(n, 0)
	if cur, ok := BatchLimit(ctx); ok && cur <= n {
		return
	}
	ctx.Set(MetaBatchLimit, n)
}

// LogID identifies one invocation in the Debug records of [Logging]. It is
// the value stored under scheduler.MetaLogID. It is a number so that setting
// it costs no formatting; String formats it when someone reads it.
type LogID uint64

// String formats the id as 16 hex digits.
func (id LogID) String() string { return fmt.Sprintf("%016x", uint64(id)) }

// LogIDOf returns the LogID that Logging stored in the invocation, if any.
func LogIDOf(ctx *scheduler.InvokeContext) (LogID, bool) {
	v, ok := ctx.Get(scheduler.MetaLogID)
	if !ok {
		return 0, false
	}
	id, ok := v.(LogID)
	return id, ok
}
