package queue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// What a queue keeps reachable once its consumer moved past a segment or
// ring: nothing before the consumer's position. A queue that kept its first
// segment would keep every segment ever linked after it (each links the
// next), and a mailbox that stays busy for hours would grow without bound.

func ringsReachable[T any](q *RingMPSC[T]) int {
	n := 0
	for r := q.first.Load(); r != nil; r = r.next.Load() {
		n++
	}
	return n
}

func segmentsReachable[T any](q *MPSC[T]) int {
	n := 0
	for s := q.first.Load(); s != nil; s = s.next.Load() {
		n++
	}
	return n
}

func TestRingDropsConsumedRings(t *testing.T) {
	var q RingMPSC[int]
	for round := 0; round < 4; round++ {
		// Twice the largest ring without popping: the ring closes and a new
		// one is linked, again and again.
		for i := 0; i < 2*ringMax; i++ {
			q.Push(i)
		}
		for i := 0; i < 2*ringMax; i++ {
			v, ok := q.Pop()
			require.True(t, ok)
			require.Equal(t, i, v)
		}
		require.LessOrEqual(t, ringsReachable(&q), 1, "round %d: consumed rings are unreachable", round)
	}
	// The shrink on idle links a small ring: the big one is dropped too.
	for range shrinkAfter {
		q.Release()
	}
	require.Less(t, q.Cap(), ringMax, "given back")
	require.Equal(t, 1, ringsReachable(&q))
}

func TestMPSCDropsConsumedSegments(t *testing.T) {
	for _, inline := range []bool{false, true} {
		var iq InlineMPSC[int]
		q := &iq.MPSC
		if inline {
			iq.Init()
		}
		for round := 0; round < 4; round++ {
			for i := 0; i < 10*maxSegment; i++ {
				q.Push(i)
			}
			for i := 0; i < 10*maxSegment; i++ {
				v, ok := q.Pop()
				require.True(t, ok)
				require.Equal(t, i, v)
			}
			require.LessOrEqual(t, segmentsReachable(q), 2, "inline=%v round %d: consumed segments are unreachable", inline, round)
			require.Zero(t, q.Len())
		}
	}
}

// A steady stream lighter than the burst that grew the ring shrinks it to
// what the stream needs, not to the first size: otherwise every shrink is
// followed by a regrowth, a ring allocated per doubling.
func TestRingShrinksToSteadyLoad(t *testing.T) {
	var q RingMPSC[int]
	activation := func(n int) {
		for i := 0; i < n; i++ {
			q.Push(i)
		}
		for i := 0; i < n; i++ {
			if _, ok := q.Pop(); !ok {
				t.Fatal("lost a value")
			}
		}
		q.Release()
	}
	activation(20000) // a burst: grows the ring
	require.Greater(t, q.Cap(), 2048)
	for range shrinkAfter {
		activation(300)
	}
	require.Equal(t, 2048, q.Cap(), "four times the steady activations, rounded up")
	allocs := testing.AllocsPerRun(100, func() { activation(300) })
	require.Zero(t, allocs, "the steady stream fits: no regrowth")
	require.Equal(t, 2048, q.Cap())
}
