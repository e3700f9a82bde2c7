package queue_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/queue"
)

func TestMPSCFIFOAcrossSegments(t *testing.T) {
	var q queue.MPSC[int]
	require.True(t, q.Empty())
	_, ok := q.Pop()
	require.False(t, ok)
	for i := 0; i < 1000; i++ {
		q.Push(i)
	}
	require.Equal(t, 1000, q.Len())
	for i := 0; i < 1000; i++ {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, i, v)
	}
	require.True(t, q.Empty())
	require.Equal(t, 0, q.Len())
}

type item struct{ producer, seq int }

// fifo is what the MPSC and ring queues have in common for these tests.
type fifo interface {
	Push(item)
	Pop() (item, bool)
}

// Many producers, one consumer: nothing lost, nothing duplicated, and each
// producer's values arrive in the order it pushed them.
func checkConcurrentProducersKeepOrder(t *testing.T, q fifo) {
	checkProducersKeepOrder(t, q, func(p, each int) {
		for i := 0; i < each; i++ {
			q.Push(item{p, i})
		}
	})
}

// checkProducersKeepOrder runs produce(p, each) on 8 goroutines, each of
// which must push item{p, 0} to item{p, each-1} in order into q, and
// consumes q until every value came, in each producer's order, once.
func checkProducersKeepOrder(t *testing.T, q fifo, produce func(p, each int)) {
	const producers, each = 8, 20000
	var wg sync.WaitGroup
	for p := 0; p < producers; p++ {
		wg.Go(func() { produce(p, each) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	next := make([]int, producers)
	got, finished := 0, false
	for got < producers*each {
		v, ok := q.Pop()
		if !ok {
			if finished {
				require.Failf(t, "lost values", "got %d of %d", got, producers*each)
			}
			select {
			case <-done:
				finished = true
			default:
			}
			continue
		}
		require.Equal(t, next[v.producer], v.seq, "producer %d out of order", v.producer)
		next[v.producer]++
		got++
	}
	<-done
	_, ok := q.Pop()
	assert.False(t, ok, "no extra values")
}

func TestMPSCConcurrentProducersKeepOrder(t *testing.T) {
	checkConcurrentProducersKeepOrder(t, &queue.MPSC[item]{})
}

func TestMPSCMarkSeesLaterPublish(t *testing.T) {
	var q queue.MPSC[int]
	m := q.Mark()
	require.False(t, q.PublishedAfter(m))
	q.Push(1)
	require.True(t, q.PublishedAfter(m))
	_, _ = q.Pop()
	m = q.Mark()
	require.False(t, q.PublishedAfter(m))
	for i := 0; i < 7; i++ { // fill the first segment exactly
		q.Push(i)
		_, _ = q.Pop()
	}
	m = q.Mark()
	require.False(t, q.PublishedAfter(m))
	q.Push(42) // lands in the next segment
	require.True(t, q.PublishedAfter(m))
}

func BenchmarkMPSCPushPop(b *testing.B) {
	var q queue.MPSC[int]
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		q.Push(i)
		q.Pop()
	}
}
