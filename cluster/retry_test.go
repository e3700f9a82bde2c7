package cluster

import (
	"math"
	"math/rand/v2"
	"testing"
	"testing/quick"
	"time"

	"github.com/stretchr/testify/require"
)

// V3.2: property tests of the retry policy: bounds, monotone caps, jitter
// range.
func TestRetryPolicyProperties(t *testing.T) {
	prop := func(baseMs uint16, extra uint16, jitterPct uint8, n uint8, u float64) bool {
		p := RetryPolicy{
			MaxAttempts: 5,
			Base:        time.Duration(baseMs%1000+1) * time.Millisecond,
			Jitter:      float64(jitterPct%101) / 100,
		}
		p.Max = p.Base + time.Duration(extra)*time.Millisecond
		if p.Validate() != nil {
			return false
		}
		attempt := int(n%40) + 1
		u = math.Abs(math.Mod(u, 1)) // [0, 1)
		if math.IsNaN(u) {
			u = 0
		}
		c := p.Cap(attempt)
		d := p.Delay(attempt, u)
		lo := c - time.Duration(float64(c)*p.Jitter)
		return c >= p.Base && c <= p.Max && // bounds
			p.Cap(attempt+1) >= c && // monotone caps
			d <= c && d >= lo-1 // jitter range (1 ns of rounding)
	}
	require.NoError(t, quick.Check(prop, &quick.Config{MaxCount: 5000, Rand: nil}))
}

// Cap with waits near the largest Duration: doubling Base once more would
// overflow; before, Cap went negative, then 0, and retries stopped waiting.
func TestRetryPolicyCapHuge(t *testing.T) {
	p := RetryPolicy{MaxAttempts: 10, Base: 1 << 62, Max: math.MaxInt64}
	require.NoError(t, p.Validate())
	for n := 1; n <= 10; n++ {
		require.GreaterOrEqual(t, p.Cap(n), p.Base, "Cap(%d)", n)
	}
	require.Equal(t, time.Duration(math.MaxInt64), p.Cap(3))
}

func TestRetryPolicyDefaults(t *testing.T) {
	p := DefaultRetryPolicy()
	require.NoError(t, p.Validate())
	require.Equal(t, 50*time.Millisecond, p.Cap(1))
	require.Equal(t, 100*time.Millisecond, p.Cap(2))
	require.Equal(t, 2*time.Second, p.Cap(7))
	require.Equal(t, 2*time.Second, p.Cap(1000))
}

func TestRetryPolicyValidateNamesField(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     RetryPolicy
		field string
	}{
		{"attempts", RetryPolicy{MaxAttempts: 0, Base: 1, Max: 1}, "MaxAttempts"},
		{"base", RetryPolicy{MaxAttempts: 1, Base: 0, Max: 1}, "Base"},
		{"max", RetryPolicy{MaxAttempts: 1, Base: 2, Max: 1}, "Retry.Max"},
		{"jitter", RetryPolicy{MaxAttempts: 1, Base: 1, Max: 1, Jitter: 1.5}, "Jitter"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.p.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Contains(t, err.Error(), tc.field)
		})
	}
}

// A seeded source replays the same jitter exactly.
func TestRetryJitterReplaysWithSeed(t *testing.T) {
	p := DefaultRetryPolicy()
	draw := func() []time.Duration {
		r := newLockedRand(rand.NewPCG(7, 9))
		var out []time.Duration
		for n := 1; n <= 10; n++ {
			out = append(out, p.Delay(n, r.Float64()))
		}
		return out
	}
	require.Equal(t, draw(), draw())
}
