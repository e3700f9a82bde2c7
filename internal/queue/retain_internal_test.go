package queue

import (
	"sync"
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

// A young queue gives its empty ring back when its consumer goes idle: an
// actor that received a message and went idle holds no ring. The next push
// starts a new one, in order.
func TestRingGivenBackWhenYoungAndIdle(t *testing.T) {
	var q RingMPSC[int]
	q.Push(1)
	v, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 1, v)
	m := q.Mark()
	q.Release()
	require.Zero(t, q.Cap(), "the empty ring is given back")
	require.Zero(t, ringsReachable(&q))
	require.Nil(t, q.tail.Load())
	require.False(t, q.PublishedAfter(q.Mark()))
	require.True(t, q.Empty())
	q.Push(2)
	q.Push(3)
	require.True(t, q.PublishedAfter(m), "a push after the drop is seen from a mark before it")
	require.True(t, q.PublishedAfter(q.Mark()))
	require.Equal(t, 2, q.Len())
	for _, want := range []int{2, 3} {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
	require.Equal(t, ringFirst, q.Cap())
}

// A producer that finds the ring closed by the consumer's drop starts a new
// first ring (not a bigger one after the dropped ring, which nobody reads).
func TestRingPushAfterDropOnStaleTail(t *testing.T) {
	var q RingMPSC[int]
	q.Push(1)
	q.Pop()
	r := q.tail.Load()
	require.True(t, q.drop(r))
	// A producer that loaded r before the drop.
	got := q.advance(r)
	require.NotSame(t, r, got)
	require.Equal(t, ringFirst, len(got.slots))
	require.Same(t, got, q.first.Load())
	q.Push(7)
	v, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 7, v)
}

// A queue that keeps being activated keeps its ring: past keepAfter
// activations, going idle allocates nothing.
func TestRingKeptOnceBusy(t *testing.T) {
	var q RingMPSC[int]
	activation := func() {
		q.Push(1)
		if _, ok := q.Pop(); !ok {
			t.Fatal("lost a value")
		}
		q.Release()
	}
	for range keepAfter {
		activation()
	}
	require.Equal(t, ringFirst, q.Cap())
	require.Zero(t, testing.AllocsPerRun(1000, activation))
}

// The second activation that takes a value keeps the ring (keepAfter): a
// parent hearing from its children one at a time starts two rings, not one
// per activation.
func TestRingKeptFromSecondActivation(t *testing.T) {
	q := new(RingMPSC[int])
	for range 2 {
		q.Push(1)
		_, _ = q.Pop()
		q.Release()
	}
	require.Equal(t, ringFirst, q.Cap(), "the ring is kept")
}

// Producers racing with a consumer that drops its ring at every idle: no
// value is lost or reordered.
func TestRingDropRacesProducers(t *testing.T) {
	const producers, each = 4, 20000
	var q RingMPSC[[2]int]
	var wg sync.WaitGroup
	for p := range producers {
		wg.Go(func() {
			for i := range each {
				q.Push([2]int{p, i})
			}
		})
	}
	next := make([]int, producers)
	for got := 0; got < producers*each; {
		v, ok := q.Pop()
		if !ok {
			q.busy = 0 // stay young: drop whenever empty
			q.Release()
			continue
		}
		require.Equal(t, next[v[0]], v[1], "producer %d out of order", v[0])
		next[v[0]]++
		got++
	}
	wg.Wait()
	_, ok := q.Pop()
	require.False(t, ok)
}

var ringSink any

// The first rings of a queue are one allocation with their slots
// (newRingSeg); larger ones are two.
func TestRingSegOneAllocation(t *testing.T) {
	type env struct {
		msg any
		p   *int
	}
	for _, n := range []int{ringFirst, 2 * ringFirst, 4 * ringFirst} {
		allocs := testing.AllocsPerRun(100, func() {
			r := newRingSeg[env](n)
			if len(r.slots) != n || r.mask != uint64(n-1) {
				t.Fatalf("ring of %d: %d slots, mask %d", n, len(r.slots), r.mask)
			}
			ringSink = r // on the heap, as in a queue
		})
		require.Equal(t, 1.0, allocs, "ring of %d slots", n)
	}
	require.Equal(t, 2.0, testing.AllocsPerRun(100, func() { ringSink = newRingSeg[env](8 * ringFirst) }))
	// A queue that starts a ring per activation while young (Release gives
	// it back) allocates once per ring.
	allocs := testing.AllocsPerRun(100, func() {
		q := new(RingMPSC[env])
		for range keepAfter - 1 {
			q.Push(env{})
			_, _ = q.Pop()
			q.Release()
		}
	})
	require.Equal(t, float64(1+keepAfter-1), allocs, "the queue and one allocation per ring")
}
