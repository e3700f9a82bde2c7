package backoff

import (
	"math/rand/v2"
	"time"
)

// Rand is the random source the jitter is drawn from; *rand.Rand of
// math/rand/v2 satisfies it. A seeded source makes the waits replay exactly.
// Jitter calls it from the caller's goroutine: a source shared by goroutines
// must be safe for concurrent use.
type Rand interface {
	Int64N(n int64) int64
}

// Jittered is JitteredFrom with the process-wide random source.
func Jittered(attempt int, lo, hi time.Duration) time.Duration {
	return JitteredFrom(nil, attempt, lo, hi)
}

// JitteredFrom returns the wait before retry number attempt (≥ 1):
// lo·2^(attempt-1) capped at hi, of which the upper half is random ("equal
// jitter", uniform in [d/2, d]) drawn from r (nil: the process-wide source),
// so that retries never come faster than half the exponential step and peers
// that failed together do not retry in lockstep.
func JitteredFrom(r Rand, attempt int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < attempt && d < hi; i++ {
		if d > hi/2 { // doubling would pass hi (or overflow)
			d = hi
			break
		}
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	if r == nil {
		return half + rand.N(d-half+1)
	}
	return half + time.Duration(r.Int64N(int64(d-half+1)))
}
