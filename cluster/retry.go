package cluster

import (
	"math/rand/v2"
	"sync"
	"time"
)

// RetryPolicy decides how often and how fast the cluster context retries a
// request whose activation is unreachable, timed out, moved or busy (V3.2).
// Between attempts it waits Base·2^(n-1) capped at Max, of which a fraction
// Jitter is random (uniform in [d·(1−Jitter), d]), so callers that failed
// together do not retry in lockstep. The caller's ctx deadline bounds the
// whole request whatever the policy says (V3.3).
type RetryPolicy struct {
	// MaxAttempts is the number of attempts, the first included (≥ 1).
	// Default 10.
	MaxAttempts int
	// Base is the first wait (> 0). Default 50 ms.
	Base time.Duration
	// Max caps every wait (≥ Base). Default 2 s.
	Max time.Duration
	// Jitter is the random fraction of each wait, in [0, 1]. Default 0.5.
	Jitter float64
}

// DefaultRetryPolicy returns the seed-002 policy: base 50 ms, max 2 s, half
// of each wait jittered, ten attempts.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{MaxAttempts: 10, Base: 50 * time.Millisecond, Max: 2 * time.Second, Jitter: 0.5}
}

// Validate checks the ranges documented on the fields; errors match
// ErrInvalidConfig and name the field.
func (p RetryPolicy) Validate() error {
	switch {
	case p.MaxAttempts < 1:
		return invalidConfig("Retry.MaxAttempts %d must be >= 1", p.MaxAttempts)
	case p.Base <= 0:
		return invalidConfig("Retry.Base %v must be > 0", p.Base)
	case p.Max < p.Base:
		return invalidConfig("Retry.Max %v must be >= Retry.Base %v", p.Max, p.Base)
	case !(p.Jitter >= 0 && p.Jitter <= 1):
		return invalidConfig("Retry.Jitter %v must be in [0, 1]", p.Jitter)
	}
	return nil
}

// Cap returns the wait before attempt n+1 without jitter (n ≥ 1): Base·2^(n-1)
// capped at Max. It never decreases as n grows.
func (p RetryPolicy) Cap(n int) time.Duration {
	d := p.Base
	for i := 1; i < n && d < p.Max; i++ {
		if d > p.Max/2 { // doubling would pass Max (or overflow)
			return p.Max
		}
		d *= 2
	}
	return min(d, p.Max)
}

// Delay returns the wait after failed attempt n (≥ 1) for a random draw u in
// [0, 1): Cap(n)·(1 − Jitter·u), so it lies in [Cap(n)·(1−Jitter), Cap(n)].
func (p RetryPolicy) Delay(n int, u float64) time.Duration {
	c := p.Cap(n)
	return c - time.Duration(float64(c)*p.Jitter*u)
}

// lockedRand draws jitter from one source for every caller of a member.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func newLockedRand(src rand.Source) *lockedRand {
	if src == nil {
		src = rand.NewPCG(rand.Uint64(), rand.Uint64())
	}
	return &lockedRand{r: rand.New(src)}
}

func (l *lockedRand) Float64() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Float64()
}
