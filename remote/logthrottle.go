package remote

import (
	"sync/atomic"
	"time"
)

// logThrottle lets a log line through at most once per interval and counts
// the ones it held back. It guards the logs a peer can cause once per
// envelope (an inbound envelope refused for its type or payload): a frame
// of tiny bad envelopes would otherwise write a log line per dozen bytes
// received (TestRefusedEnvelopesLogThrottled). The events and the
// Undelivered hook still see every envelope. Lock-free: the readers of
// several connections share one.
type logThrottle struct {
	next       atomic.Int64 // Unix nanoseconds on the Node's clock before which nothing is logged
	suppressed atomic.Uint64
}

// refusalLogInterval is the least time between two logged refusals.
const refusalLogInterval = time.Second

// allow reports whether a line may be logged at now, and how many were
// held back since the last one that was; when it reports false, the line
// is counted as held back.
func (l *logThrottle) allow(now time.Time) (bool, uint64) {
	t, next := now.UnixNano(), l.next.Load()
	if t >= next && l.next.CompareAndSwap(next, t+int64(refusalLogInterval)) {
		return true, l.suppressed.Swap(0)
	}
	l.suppressed.Add(1)
	return false, 0
}
