package mailbox

import "sync"

// bounded is a fixed-capacity FIFO with an overflow policy. It takes a
// mutex per operation: bounded mailboxes trade the lock-free path for a hard
// memory limit.
type bounded[T any] struct {
	mu       sync.Mutex
	buf      []T // a ring of at most capacity values, grown on demand
	head     int
	size     int
	capacity int
	policy   Overflow
}

// boundedFirst is the ring a bounded queue starts with (or its capacity,
// when smaller); it doubles as the queue fills, up to the capacity.
const boundedFirst = 16

// NewBounded returns a fixed-capacity FIFO queue with an overflow policy;
// capacity below 1 is raised to 1, and a policy other than the three
// defined ones rejects as Reject does. It takes a mutex per operation: a bounded
// mailbox trades the lock-free path for a hard memory limit. Its memory
// grows with what it holds, up to capacity, so a capacity too large to
// allocate (math.MaxInt for "practically unbounded") reserves nothing up
// front (TestBoundedHugeCapacity).
func NewBounded[T any](capacity int, policy Overflow) Queue[T] {
	capacity = max(capacity, 1)
	return &bounded[T]{buf: make([]T, min(capacity, boundedFirst)), capacity: capacity, policy: policy}
}

// grow doubles the ring, up to the capacity, with its values in order
// from the front.
func (q *bounded[T]) grow() {
	n := len(q.buf) * 2
	if n <= 0 || n > q.capacity { // n <= 0: doubled past the int range
		n = q.capacity
	}
	buf := make([]T, n)
	k := copy(buf, q.buf[q.head:])
	copy(buf[k:], q.buf[:q.head])
	q.buf, q.head = buf, 0
}

// Push implements Queue.
func (q *bounded[T]) Push(v T) (dropped T, didDrop bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.size == len(q.buf) && len(q.buf) < q.capacity {
		q.grow()
	}
	if q.size == len(q.buf) {
		switch q.policy {
		case DropNewest:
			return v, true, nil
		case DropOldest:
			dropped = q.buf[q.head]
			var zero T
			q.buf[q.head] = zero
			q.head = (q.head + 1) % len(q.buf)
			q.size--
			didDrop = true
		default:
			// Reject, and a policy this queue does not know: with no case
			// for it, a full queue overwrote its oldest value unreported
			// and counted one more than it holds, then popped a zero value
			// (TestBoundedUnknownPolicyRejects).
			return dropped, false, ErrFull
		}
	}
	q.buf[(q.head+q.size)%len(q.buf)] = v
	q.size++
	return dropped, didDrop, nil
}

// Pop implements Queue.
func (q *bounded[T]) Pop() (T, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var zero T
	if q.size == 0 {
		return zero, false
	}
	v := q.buf[q.head]
	q.buf[q.head] = zero
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return v, true
}

// Empty implements Queue.
func (q *bounded[T]) Empty() bool { return q.Len() == 0 }

// Len implements Queue.
func (q *bounded[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.size
}
