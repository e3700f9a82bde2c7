package mailbox_test

import (
	"math"
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

// A bounded queue's memory grows with what it holds, up to its capacity:
// a capacity too large to allocate ("practically unbounded") works, and a
// queue that wraps around while it grows keeps its values in order and its
// limit exact. Before, NewBounded allocated the whole capacity up front:
// math.MaxInt panicked (makeslice) on the spawner's goroutine.
func TestBoundedHugeCapacity(t *testing.T) {
	q := mailbox.NewBounded[int](math.MaxInt, mailbox.Reject)
	for i := range 1000 {
		_, _, err := q.Push(i)
		require.NoError(t, err)
	}
	require.Equal(t, 1000, q.Len())
	for i := range 1000 {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, i, v)
	}

	q = mailbox.NewBounded[int](40, mailbox.DropOldest)
	next, want := 0, 0
	for round := 0; round < 7; round++ { // fill and half drain: the ring wraps as it grows
		for q.Len() < 30 {
			_, did, err := q.Push(next)
			require.NoError(t, err)
			require.False(t, did)
			next++
		}
		for range 15 {
			v, _ := q.Pop()
			require.Equal(t, want, v)
			want++
		}
	}
	for q.Len() < 40 {
		q.Push(next)
		next++
	}
	dropped, did, _ := q.Push(next)
	require.True(t, did, "the capacity is exact")
	require.Equal(t, want, dropped)
	want++
	for v, ok := q.Pop(); ok; v, ok = q.Pop() {
		require.Equal(t, want, v)
		want++
	}
	require.Equal(t, next+1, want)
}

// NewPriority takes at most MaxPriorityLevels levels: more is the top
// level's; before, math.MaxInt levels panicked in the allocation.
func TestPriorityHugeLevels(t *testing.T) {
	q := mailbox.NewPriority[int](math.MaxInt, func(v int) int { return v })
	for _, v := range []int{1, math.MaxInt, mailbox.MaxPriorityLevels - 1, 5} {
		q.Push(v)
	}
	requirePops(t, q, math.MaxInt, mailbox.MaxPriorityLevels-1, 5, 1)
}
