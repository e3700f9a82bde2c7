package backoff_test

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/fraktor-go/fraktor/internal/backoff"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestJitteredBounds(t *testing.T) {
	lo, hi := 10*time.Millisecond, 200*time.Millisecond
	for attempt := 1; attempt <= 10; attempt++ {
		step := min(lo<<(attempt-1), hi)
		for range 200 {
			d := backoff.Jittered(attempt, lo, hi)
			require.GreaterOrEqual(t, d, step/2, "attempt %d", attempt)
			require.LessOrEqual(t, d, step, "attempt %d", attempt)
		}
	}
}

func TestJitteredFromSeedReplays(t *testing.T) {
	lo, hi := 10*time.Millisecond, 10*time.Second
	run := func(seed uint64) []time.Duration {
		r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		var out []time.Duration
		for attempt := 1; attempt <= 12; attempt++ {
			out = append(out, backoff.JitteredFrom(r, attempt, lo, hi))
		}
		return out
	}
	a, b := run(42), run(42)
	require.Equal(t, a, b, "one seed, one sequence of waits")
	require.NotEqual(t, a, run(43), "another seed, other waits")
	for i, d := range a {
		step := min(lo<<i, hi)
		require.GreaterOrEqual(t, d, step/2)
		require.LessOrEqual(t, d, step)
	}
}

// Waits near the largest Duration: doubling lo once more would overflow;
// before, the step went negative and rand.N panicked.
func TestJitteredHuge(t *testing.T) {
	hi := time.Duration(math.MaxInt64)
	for attempt := 1; attempt <= 5; attempt++ {
		d := backoff.JitteredFrom(rand.New(rand.NewPCG(1, 2)), attempt, 1<<62, hi)
		require.GreaterOrEqual(t, d, time.Duration(1<<61), "attempt %d", attempt)
	}
}
