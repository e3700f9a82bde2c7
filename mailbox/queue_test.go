package mailbox_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/mailbox"
)

func TestBoundedPolicies(t *testing.T) {
	t.Run("DropNewest", func(t *testing.T) {
		q := mailbox.NewBounded[int](2, mailbox.DropNewest)
		for i := 1; i <= 2; i++ {
			_, did, err := q.Push(i)
			require.NoError(t, err)
			require.False(t, did)
		}
		dropped, did, err := q.Push(3)
		require.NoError(t, err)
		require.True(t, did)
		require.Equal(t, 3, dropped)
		requirePops(t, q, 1, 2)
	})
	t.Run("DropOldest", func(t *testing.T) {
		q := mailbox.NewBounded[int](2, mailbox.DropOldest)
		q.Push(1)
		q.Push(2)
		dropped, did, err := q.Push(3)
		require.NoError(t, err)
		require.True(t, did)
		require.Equal(t, 1, dropped)
		requirePops(t, q, 2, 3)
	})
	t.Run("Reject", func(t *testing.T) {
		q := mailbox.NewBounded[int](1, mailbox.Reject)
		q.Push(1)
		_, did, err := q.Push(2)
		require.ErrorIs(t, err, mailbox.ErrFull)
		require.False(t, did)
		requirePops(t, q, 1)
	})
}

func TestPriorityQueue(t *testing.T) {
	q := mailbox.NewPriority(3, func(v int) int { return v / 10 })
	for _, v := range []int{1, 21, 2, 11, 22, 99, -5} {
		q.Push(v)
	}
	require.Equal(t, 7, q.Len())
	requirePops(t, q, 21, 22, 99, 11, 1, 2, -5)
	require.True(t, q.Empty())
}

func requirePops(t *testing.T, q mailbox.Queue[int], want ...int) {
	t.Helper()
	for _, w := range want {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, w, v)
	}
	_, ok := q.Pop()
	require.False(t, ok)
}

// A full bounded queue with a policy value it does not know rejects, as
// Reject does, and keeps what it holds. Before, it overwrote its oldest
// value without reporting a drop, counted one value more than it held, and
// then handed the consumer a zero value (an actor's Receive got a nil
// message).
func TestBoundedUnknownPolicyRejects(t *testing.T) {
	q := mailbox.NewBounded[int](1, mailbox.Overflow(7))
	_, _, err := q.Push(1)
	require.NoError(t, err)
	_, did, err := q.Push(2)
	require.ErrorIs(t, err, mailbox.ErrFull)
	require.False(t, did)
	require.Equal(t, 1, q.Len())
	v, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 1, v)
	_, ok = q.Pop()
	require.False(t, ok, "no phantom value")
}

// A priority queue without a level function is a FIFO at level 0; before,
// its first Push panicked.
func TestPriorityNilLevelFunc(t *testing.T) {
	q := mailbox.NewPriority[int](3, nil)
	for i := range 3 {
		_, _, err := q.Push(i)
		require.NoError(t, err)
	}
	for i := range 3 {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
}
