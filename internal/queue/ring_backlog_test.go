package queue_test

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/internal/queue"
)

// Backlog counts what producers pushed and the consumer has not published
// as taken: exact while the consumer is idle (after Release), at most a
// quarter ring more while it runs, across grown rings, a shrink and a
// dropped ring.
func TestRingBacklog(t *testing.T) {
	var q queue.RingMPSC[int]
	require.Zero(t, q.Backlog())
	for i := range 10000 { // grows through several rings
		q.Push(i)
	}
	require.Equal(t, 10000, q.Backlog())
	for range 5000 {
		_, ok := q.Pop()
		require.True(t, ok)
	}
	b := q.Backlog()
	require.GreaterOrEqual(t, b, q.Len())
	require.LessOrEqual(t, b, q.Len()+q.Cap()/4, "the consumer publishes its position every quarter ring")
	q.Release()
	require.Equal(t, 5000, q.Backlog(), "exact once the consumer went idle")
	q.PushAll([]int{1, 2, 3})
	require.Equal(t, 5003, q.Backlog())
	for {
		if _, ok := q.Pop(); !ok {
			break
		}
	}
	q.Release()
	require.Zero(t, q.Backlog())
	for range queue.ShrinkAfter { // quiet activations: the grown ring goes back
		q.Push(0)
		q.Pop()
		q.Release()
	}
	require.Zero(t, q.Backlog())
	q.Push(1)
	require.Equal(t, 1, q.Backlog())

	// A young queue gives its ring back when idle (dropped): nothing left,
	// and the next push starts a new ring that Backlog finds.
	var y queue.RingMPSC[int]
	y.Push(1)
	y.Pop()
	y.Release()
	require.Zero(t, y.Backlog())
	y.Push(2)
	y.Push(3)
	require.Equal(t, 2, y.Backlog())
}

// Backlog may be called by any goroutine while producers push and the
// consumer pops (the race detector checks that it reads no consumer
// state), and never counts fewer than the values pushed before the call
// that no Pop had started to take. The queue is past its young
// activations first: a young one gives its ring back when idle, and a
// first ring that a producer starts then is found once that producer has
// published it (see Backlog).
func TestRingBacklogConcurrent(t *testing.T) {
	var q queue.RingMPSC[int]
	for range 2 { // two activations that took values: the ring stays
		q.Push(0)
		q.Pop()
		q.Release()
	}
	const producers, each = 4, 20000
	var pushed, popping atomic.Int64
	var wg sync.WaitGroup
	for range producers {
		wg.Go(func() {
			run := make([]int, 64)
			for i := 0; i < each; {
				if i%3 == 0 {
					q.Push(i)
					pushed.Add(1)
					i++
					continue
				}
				k := min(len(run), each-i)
				q.PushAll(run[:k])
				pushed.Add(int64(k))
				i += k
			}
		})
	}
	checkerDone, stop := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(checkerDone)
		for {
			select {
			case <-stop:
				return
			default:
			}
			before := pushed.Load()
			b := q.Backlog()
			if taking := popping.Load(); int64(b) < before-taking {
				t.Errorf("Backlog %d below the %d values pushed before it less the %d taken", b, before, taking)
				return
			}
		}
	}()
	for got := 0; got < producers*each; {
		popping.Add(1)
		if _, ok := q.Pop(); ok {
			got++
			continue
		}
		popping.Add(-1)
		q.Release()
	}
	wg.Wait()
	close(stop)
	<-checkerDone
	q.Release()
	require.Zero(t, q.Backlog())
}
