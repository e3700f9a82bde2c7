// Package backoff computes retry waits for reconnecting and re-polling loops
// (the remote endpoints, the Consul provider).
package backoff

import (
	"math/rand/v2"
	"time"
)

// Jittered returns the wait before retry number attempt (≥ 1):
// lo·2^(attempt-1) capped at hi, of which the upper half is random ("equal
// jitter", uniform in [d/2, d]), so that retries never come faster than half
// the exponential step and peers that failed together do not retry in
// lockstep.
func Jittered(attempt int, lo, hi time.Duration) time.Duration {
	d := lo
	for i := 1; i < attempt && d < hi; i++ {
		d *= 2
	}
	d = min(d, hi)
	half := d / 2
	return half + rand.N(d-half+1)
}
