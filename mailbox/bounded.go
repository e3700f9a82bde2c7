package mailbox

import "sync"

// bounded is a fixed-capacity FIFO with an overflow policy. It takes a
// mutex per operation: bounded mailboxes trade the lock-free path for a hard
// memory limit.
type bounded[T any] struct {
	mu     sync.Mutex
	buf    []T
	head   int
	size   int
	policy Overflow
}

// NewBounded returns a fixed-capacity FIFO queue with an overflow policy;
// capacity below 1 is raised to 1, and a policy other than the three
// defined ones rejects as Reject does. It takes a mutex per operation: a bounded
// mailbox trades the lock-free path for a hard memory limit.
func NewBounded[T any](capacity int, policy Overflow) Queue[T] {
	return &bounded[T]{buf: make([]T, max(capacity, 1)), policy: policy}
}

// Push implements Queue.
func (q *bounded[T]) Push(v T) (dropped T, didDrop bool, err error) {
	q.mu.Lock()
	defer q.mu.Unlock()
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
