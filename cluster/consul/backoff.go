package consul

import (
	"context"
	"math/rand/v2"
	"time"
)

// backoff returns the wait before retry number attempt (1 for the first
// retry): base·2^(attempt-1) capped at maxWait, of which the upper half is
// random ("equal jitter"), so that retries never come faster than half the
// exponential step and members that failed together do not retry together.
func backoff(attempt int, base, maxWait time.Duration) time.Duration {
	d := base
	for i := 1; i < attempt && d < maxWait; i++ {
		d *= 2
	}
	d = min(d, maxWait)
	half := d / 2
	return half + rand.N(d-half+1)
}

// waitCtx waits for d or until ctx ends; it reports whether d passed.
func waitCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
