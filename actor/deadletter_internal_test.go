package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The dead-letter log throttle: the first record at once, then at most one
// per interval, each with the number not logged since the previous one.
func TestDeadLetterLogTurn(t *testing.T) {
	d := newDeadLetters(nil, time.Hour)
	ok, suppressed := d.logTurn(1)
	require.True(t, ok)
	require.Zero(t, suppressed)
	for n := uint64(2); n <= 10; n++ {
		ok, _ = d.logTurn(n)
		require.False(t, ok, "within the interval")
	}
	d.start = d.start.Add(-2 * time.Hour) // the interval has passed
	ok, suppressed = d.logTurn(11)
	require.True(t, ok)
	require.Equal(t, uint64(9), suppressed, "2..10 were not logged")
	ok, _ = d.logTurn(12)
	require.False(t, ok)
}
