package backoff_test

import (
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
