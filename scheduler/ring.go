package scheduler

// ring is a growable FIFO of runnables. It is not safe for concurrent use;
// its owner guards it.
type ring struct {
	buf        []Runnable
	head, size int
}

func (q *ring) len() int { return q.size }

func (q *ring) push(r Runnable) {
	if q.size == len(q.buf) {
		n := max(16, 2*len(q.buf))
		buf := make([]Runnable, n)
		for i := 0; i < q.size; i++ {
			buf[i] = q.buf[(q.head+i)%len(q.buf)]
		}
		q.buf, q.head = buf, 0
	}
	q.buf[(q.head+q.size)%len(q.buf)] = r
	q.size++
}

func (q *ring) pop() Runnable {
	if q.size == 0 {
		return nil
	}
	r := q.buf[q.head]
	q.buf[q.head] = nil
	q.head = (q.head + 1) % len(q.buf)
	q.size--
	return r
}
