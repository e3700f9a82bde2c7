package queue_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/queue"
)

func TestRingFIFOAcrossGrowth(t *testing.T) {
	var q queue.RingMPSC[int]
	require.True(t, q.Empty())
	for round := 0; round < 3; round++ {
		for i := 0; i < 10000; i++ {
			q.Push(i)
		}
		require.Equal(t, 10000, q.Len())
		for i := 0; i < 10000; i++ {
			v, ok := q.Pop()
			require.True(t, ok)
			require.Equal(t, i, v)
		}
		_, ok := q.Pop()
		require.False(t, ok)
		require.True(t, q.Empty())
	}
}

func TestRingReusesSlotsWithoutAllocating(t *testing.T) {
	var q queue.RingMPSC[int]
	q.Push(0)
	q.Pop()
	allocs := testing.AllocsPerRun(1000, func() {
		for i := 0; i < 8; i++ {
			q.Push(i)
		}
		for i := 0; i < 8; i++ {
			q.Pop()
		}
	})
	assert.Zero(t, allocs)
}

func TestRingConcurrentProducersKeepOrder(t *testing.T) {
	checkConcurrentProducersKeepOrder(t, &queue.RingMPSC[item]{})
}

func TestRingMark(t *testing.T) {
	var q queue.RingMPSC[int]
	m := q.Mark()
	require.False(t, q.PublishedAfter(m))
	q.Push(1)
	require.True(t, q.PublishedAfter(m))
	q.Pop()
	m = q.Mark()
	require.False(t, q.PublishedAfter(m))
	for i := 0; i < 100; i++ { // grows: closes the first ring
		q.Push(i)
	}
	require.True(t, q.PublishedAfter(m))
	for i := 0; i < 100; i++ {
		q.Pop()
	}
	m = q.Mark()
	require.False(t, q.PublishedAfter(m))
	q.Push(7)
	require.True(t, q.PublishedAfter(m))
}

func BenchmarkRingPushPop(b *testing.B) {
	var q queue.RingMPSC[int]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q.Push(i)
		q.Pop()
	}
}

// A ring that grew in a burst is kept while bursts keep coming (a consumer
// that pauses between bursts does not allocate a ring per burst), and given
// back after quiet idle periods.
func TestRingShrinksWhenIdle(t *testing.T) {
	var q queue.RingMPSC[int]
	burst := func() {
		for i := 0; i < 1000; i++ {
			q.Push(i)
		}
		for i := 0; i < 1000; i++ {
			if v, _ := q.Pop(); v != i {
				t.Fatalf("popped %d, want %d", v, i) // not testify: no boxing in AllocsPerRun
			}
		}
		q.Release()
	}
	burst()
	require.Greater(t, q.Cap(), 8, "grew during the burst")
	allocs := testing.AllocsPerRun(20, burst) // its warm-up run may grow the ring once more
	assert.Zero(t, allocs, "the grown ring serves the next bursts")
	grown := q.Cap()
	for range queue.ShrinkAfter - 1 { // quiet periods, one short
		q.Push(1)
		q.Pop()
		q.Release()
	}
	require.Equal(t, grown, q.Cap(), "kept: not quiet long enough")
	burst() // a busy period starts the count again
	for range queue.ShrinkAfter - 1 {
		q.Release()
	}
	require.Equal(t, grown, q.Cap())
	q.Release()
	require.Equal(t, 8, q.Cap(), "given back after ShrinkAfter quiet idle periods")
	allocs = testing.AllocsPerRun(100, func() {
		for i := 0; i < 16; i++ {
			q.Push(i)
		}
		for i := 0; i < 16; i++ {
			q.Pop()
		}
	})
	assert.Zero(t, allocs, "the small ring is reused")
	q.Push(5)
	v, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 5, v)
}

// PushAll keeps FIFO order with Push and Pop interleaved, across runs
// larger than the ring's free slots (split where the ring closes) and the
// growth that follows, and allocates nothing once the ring has grown.
func TestRingPushAllFIFO(t *testing.T) {
	var q queue.RingMPSC[int]
	q.PushAll(nil) // no ring for nothing
	require.Zero(t, q.Cap())
	next, want := 0, 0
	run := make([]int, 0, 64)
	for k := 1; k <= 64; k++ {
		run = run[:0]
		for range k {
			run = append(run, next)
			next++
		}
		q.PushAll(run)
		q.Push(next)
		next++
		for range k / 2 { // leave some behind: later runs meet a partly full ring
			v, ok := q.Pop()
			require.True(t, ok)
			require.Equal(t, want, v)
			want++
		}
	}
	for ; want < next; want++ {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, want, v)
	}
	_, ok := q.Pop()
	require.False(t, ok)
	allocs := testing.AllocsPerRun(100, func() {
		q.PushAll(run[:32])
		for range 32 {
			q.Pop()
		}
	})
	assert.Zero(t, allocs)
}

// PushAll's runs from many producers, with Push's values among them: each
// producer's values arrive in order, none lost or duplicated.
func TestRingPushAllConcurrentProducersKeepOrder(t *testing.T) {
	var q queue.RingMPSC[item]
	checkProducersKeepOrder(t, &q, func(p, each int) {
		run := make([]item, 0, 8)
		for i := 0; i < each; {
			k := min(i%7, each-i) // runs of 0 (a Push) to 6
			if k == 0 {
				q.Push(item{p, i})
				i++
				continue
			}
			run = run[:0]
			for range k {
				run = append(run, item{p, i})
				i++
			}
			q.PushAll(run)
		}
	})
}
