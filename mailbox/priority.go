package mailbox

import "sync"

// priority is an unbounded queue with a fixed number of priority levels;
// Pop returns the oldest value of the highest non-empty level. The level of
// a value comes from the function given to NewPriority and is clamped to
// [0, levels).
type priority[T any] struct {
	mu     sync.Mutex
	levels []fifo[T]
	size   int
	prio   func(T) int
}

type fifo[T any] struct {
	buf  []T
	head int
}

// MaxPriorityLevels bounds NewPriority's levels: each level is allocated
// with the queue, so a count past it (math.MaxInt) panicked in the
// allocation, on the spawner's goroutine, or reserved memory per mailbox
// for levels no message would use (TestPriorityHugeLevels).
const MaxPriorityLevels = 1 << 10

// NewPriority returns an unbounded queue with the given number of priority
// levels (at least 1, at most MaxPriorityLevels): Pop returns the oldest
// value of the highest non-empty level, and the level of a value is prio(v)
// clamped to [0, levels) (0 for every value when prio is nil).
func NewPriority[T any](levels int, prio func(T) int) Queue[T] {
	if prio == nil { // every value at level 0, rather than a panic in Push
		prio = func(T) int { return 0 }
	}
	return &priority[T]{levels: make([]fifo[T], min(max(levels, 1), MaxPriorityLevels)), prio: prio}
}

// Push implements Queue; it never drops.
func (q *priority[T]) Push(v T) (dropped T, didDrop bool, err error) {
	l := min(max(q.prio(v), 0), len(q.levels)-1)
	q.mu.Lock()
	f := &q.levels[l]
	if f.head > 0 && len(f.buf) == cap(f.buf) && f.head >= len(f.buf)/2 {
		// Full, and at least half of it popped already: move the rest to
		// the front instead of growing. Resetting only a level found empty
		// let one that always held a value grow by a slot per message for
		// ever (TestPriorityLevelDoesNotGrowUnderSteadyTraffic). The copy
		// is of at most as many values as were popped since the last one.
		n := copy(f.buf, f.buf[f.head:])
		clear(f.buf[n:])
		f.buf, f.head = f.buf[:n], 0
	}
	f.buf = append(f.buf, v)
	q.size++
	q.mu.Unlock()
	return dropped, false, nil
}

// Pop implements Queue.
func (q *priority[T]) Pop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	for l := len(q.levels) - 1; l >= 0; l-- {
		f := &q.levels[l]
		if f.head < len(f.buf) {
			v := f.buf[f.head]
			f.buf[f.head] = zero
			f.head++
			q.size--
			return v, true
		}
	}
	return zero, false
}

// Empty implements Queue.
func (q *priority[T]) Empty() bool { return q.Len() == 0 }

// Len implements Queue.
func (q *priority[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size
}
