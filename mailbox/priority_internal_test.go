package mailbox

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A level that is never empty when a value arrives (the consumer keeps up,
// one message behind) holds memory for what it holds, not for everything
// that ever went through it. Before, its slice was reset only when found
// empty by a push, so under steady traffic it grew by one slot per message
// for ever: 24 bytes a message for an actor's envelopes.
func TestPriorityLevelDoesNotGrowUnderSteadyTraffic(t *testing.T) {
	q := NewPriority[int](2, func(v int) int { return v % 2 }).(*priority[int])
	_, _, _ = q.Push(0) // one queued value at every push from here on
	for i := range 100_000 {
		_, _, _ = q.Push(2 * (i + 1))
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, 2*i, v, "FIFO within a level")
	}
	require.Equal(t, 1, q.Len())
	require.LessOrEqual(t, cap(q.levels[0].buf), 16, "the level's slice is bounded by what it holds")
}
