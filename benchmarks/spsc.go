package benchmarks

import (
	"runtime"
	"sync/atomic"
)

// spscRing is a bounded lock-free single-producer single-consumer ring: the
// raw limit of handing a pointer from one goroutine to another. Each side
// caches the other side's index and reloads it only when the cached value
// says the ring is full (producer) or empty (consumer). A side that must
// wait yields with runtime.Gosched, so it spins only while nothing else is
// runnable on its P.
//
// Exactly one goroutine may call push and exactly one may call pop.
type spscRing[T any] struct {
	buf   []T
	mask  uint64
	_     [48]byte
	head  atomic.Uint64 // next slot to pop; written by the consumer
	tail0 uint64        // consumer's cached tail
	_     [48]byte
	tail  atomic.Uint64 // next slot to push; written by the producer
	head0 uint64        // producer's cached head
	_     [48]byte
}

// newSPSC returns a ring of at least size slots (rounded up to a power of two).
func newSPSC[T any](size int) *spscRing[T] {
	n := 1
	for n < size {
		n <<= 1
	}
	return &spscRing[T]{buf: make([]T, n), mask: uint64(n - 1)}
}

// push appends v, waiting while the ring is full.
func (r *spscRing[T]) push(v T) {
	t := r.tail.Load()
	for t-r.head0 > r.mask {
		r.head0 = r.head.Load()
		if t-r.head0 > r.mask {
			runtime.Gosched()
		}
	}
	r.buf[t&r.mask] = v
	r.tail.Store(t + 1)
}

// pop removes the oldest value, waiting while the ring is empty.
func (r *spscRing[T]) pop() T {
	h := r.head.Load()
	for h == r.tail0 {
		r.tail0 = r.tail.Load()
		if h == r.tail0 {
			runtime.Gosched()
		}
	}
	i := h & r.mask
	v := r.buf[i]
	var zero T
	r.buf[i] = zero
	r.head.Store(h + 1)
	return v
}
