package queue

import "sync/atomic"

// Segment sizes: the first segment is small so an actor that received few
// messages holds little memory; later ones double up to maxSegment.
const (
	firstSegment = 8
	maxSegment   = 128
)

type slot[T any] struct {
	val   T
	ready atomic.Uint32
}

type segment[T any] struct {
	claim atomic.Uint64 // slots handed out to producers (may exceed len(slots))
	next  atomic.Pointer[segment[T]]
	slots []slot[T]
	base  uint64 // position of slots[0] in the queue since it was created
}

// newSegment allocates a segment and its slots in one allocation for the
// sizes the queue uses.
func newSegment[T any](n int) *segment[T] {
	switch {
	case n <= 8:
		x := &struct {
			s segment[T]
			a [8]slot[T]
		}{}
		x.s.slots = x.a[:]
		return &x.s
	case n <= 16:
		x := &struct {
			s segment[T]
			a [16]slot[T]
		}{}
		x.s.slots = x.a[:]
		return &x.s
	case n <= 32:
		x := &struct {
			s segment[T]
			a [32]slot[T]
		}{}
		x.s.slots = x.a[:]
		return &x.s
	case n <= 64:
		x := &struct {
			s segment[T]
			a [64]slot[T]
		}{}
		x.s.slots = x.a[:]
		return &x.s
	default:
		x := &struct {
			s segment[T]
			a [maxSegment]slot[T]
		}{}
		x.s.slots = x.a[:]
		return &x.s
	}
}

// MPSC is an unbounded lock-free multi-producer single-consumer FIFO.
//
// Values live in linked segments of slots; a producer claims a slot with one
// atomic add, writes the value and publishes it with one atomic store, so a
// push allocates nothing except, once per segment (up to 128 values), the
// next segment. Consumed segments are left to the garbage collector and never
// reused, which keeps the queue free of ABA hazards.
//
// Push may be called from any goroutine. Pop, Empty and Len must be called by
// one consumer at a time (the mailbox's scheduled status guarantees it). A
// value whose producer has claimed its slot but not yet published it is not
// visible: Pop reports empty until it is, and the producer then schedules the
// mailbox itself.
type MPSC[T any] struct {
	tail   atomic.Pointer[segment[T]]
	first  atomic.Pointer[segment[T]] // the consumer's segment: nothing before it stays reachable
	head   *segment[T]                // consumer only
	hidx   int32                      // consumer only
	zeroed int32                      // consumer only: slots of head below this are cleared
}

// InlineMPSC is an MPSC queue whose first segment, of two slots, lives inside
// the queue itself: a queue that rarely holds more than two values (an
// actor's system queue: Started, then Stop) allocates nothing for them. The inline
// segment is used once, like any other, and never reused; when Pop moves
// past it, it clears the segment's consumed values and cuts its link to the
// next one, so that the queue's owner keeps nothing it has consumed.
type InlineMPSC[T any] struct {
	MPSC[T]
	seg   segment[T]
	slots [inlineSlots]slot[T]
}

// inlineSlots is the size of InlineMPSC's inline segment; no other segment
// has this size (firstSegment is larger), which is how Pop knows it.
const inlineSlots = 2

// Init links the inline segment; call it once before use, where the queue
// will stay (it must not be copied afterwards).
func (q *InlineMPSC[T]) Init() {
	q.seg.slots = q.slots[:]
	q.tail.Store(&q.seg)
	q.first.Store(&q.seg)
}

// Push enqueues v. It never blocks and never fails.
func (q *MPSC[T]) Push(v T) {
	seg := q.tail.Load()
	if seg == nil {
		seg = q.init()
	}
	for {
		i := seg.claim.Add(1) - 1
		if i < uint64(len(seg.slots)) {
			s := &seg.slots[i]
			s.val = v
			s.ready.Store(1)
			return
		}
		next := seg.next.Load()
		if next == nil {
			n := newSegment[T](min(2*len(seg.slots), maxSegment))
			n.base = seg.base + uint64(len(seg.slots))
			if seg.next.CompareAndSwap(nil, n) {
				next = n
			} else {
				next = seg.next.Load()
			}
		}
		q.tail.CompareAndSwap(seg, next)
		seg = q.tail.Load()
	}
}

// init installs the first segment. The producer that wins publishes it for
// the consumer before it pushes its own value, so a value pushed meanwhile by
// another producer is found no later than the winner's own.
func (q *MPSC[T]) init() *segment[T] {
	s := newSegment[T](firstSegment)
	if q.tail.CompareAndSwap(nil, s) {
		q.first.Store(s)
		return s
	}
	return q.tail.Load()
}

// Pop dequeues the oldest published value.
func (q *MPSC[T]) Pop() (T, bool) {
	var zero T
	seg := q.head
	if seg == nil {
		if seg = q.first.Load(); seg == nil {
			return zero, false
		}
		q.head = seg
	}
	if int(q.hidx) == len(seg.slots) {
		next := seg.next.Load()
		if next == nil {
			return zero, false
		}
		// The consumed segment becomes garbage as a whole (first moves on,
		// so nothing keeps it reachable): no need to clear it. But for
		// InlineMPSC's own segment, which lives as long as the queue: its
		// consumed values are cleared and its link to the next segment
		// cut, or the queue's owner (an actor's cell) kept its first values
		// and, through the link, every segment linked since with the values
		// in them, for good (TestNewuser10InlineSegmentReleasedWhenLeft).
		// Cutting the link is safe once the tail has left the inline
		// segment: both inline slots were claimed, so a producer that
		// still holds the inline segment from an earlier load claims
		// nothing there; it may link a new empty segment to it (the CAS
		// from nil), which it then leaves for the real tail (its CAS of
		// the tail from the inline segment fails: the tail only moves
		// forward), and that one segment stays garbage linked here. The
		// producer that linked next may not have moved the tail yet, so
		// the consumer moves it first (the same CAS that producer makes):
		// cut while the tail was still the inline segment, a second
		// producer linked another segment there and made it the tail,
		// and what it and later ones pushed was never popped
		// (TestInlineCutKeepsValuesOfALateTailMove). A Mark at the inline
		// segment's end then reads an empty or nil next: the consumer
		// that cut the link took over what followed.
		if len(seg.slots) == inlineSlots {
			var zero T
			for i := q.zeroed; i < q.hidx; i++ {
				seg.slots[i].val = zero
			}
			q.tail.CompareAndSwap(seg, next)
			seg.next.Store(nil)
		}
		q.head, q.hidx, q.zeroed, seg = next, 0, 0, next
		q.first.Store(next)
	}
	s := &seg.slots[q.hidx]
	if s.ready.Load() == 0 {
		return zero, false
	}
	// The slot is not cleared here: a consumer write into the line the
	// producers are filling would cost a cache-line transfer per message.
	// Release clears consumed slots when the consumer goes idle.
	q.hidx++
	return s.val, true
}

// Release clears the consumed slots of the current segment, so that an idle
// queue does not keep consumed values alive. Producers never touch those
// slots again. Consumer only.
func (q *MPSC[T]) Release() {
	seg := q.head
	if seg == nil {
		return
	}
	var zero T
	for i := q.zeroed; i < q.hidx; i++ {
		seg.slots[i].val = zero
	}
	q.zeroed = q.hidx
}

// Empty reports whether Pop would find nothing now.
func (q *MPSC[T]) Empty() bool {
	seg := q.head
	if seg == nil {
		if seg = q.first.Load(); seg == nil {
			return true
		}
		q.head = seg
	}
	i := q.hidx
	if int(i) == len(seg.slots) {
		if seg = seg.next.Load(); seg == nil {
			return true
		}
		i = 0
	}
	return seg.slots[i].ready.Load() == 0
}

// Len returns the number of values claimed and not yet consumed, in
// constant time. Consumer only.
func (q *MPSC[T]) Len() int {
	tail := q.tail.Load()
	if tail == nil {
		return 0
	}
	head := q.head
	if head == nil {
		head = q.first.Load()
	}
	claimed := tail.base + min(tail.claim.Load(), uint64(len(tail.slots)))
	return max(int(claimed)-int(head.base)-int(q.hidx), 0)
}

// Mark is a consumer position taken by the consumer while it owns the queue.
type Mark[T any] struct {
	seg *segment[T]
	idx int
}

// Mark returns the consumer's current position. Consumer only.
func (q *MPSC[T]) Mark() Mark[T] { return Mark[T]{seg: q.head, idx: int(q.hidx)} }

// PublishedAfter reports whether a value has been published at or beyond m.
// It reads only atomics and segments that are never reused, so it is safe
// from any goroutine, even after the caller gave up the consumer role; that
// is what lets a mailbox re-check for work after marking itself idle.
func (q *MPSC[T]) PublishedAfter(m Mark[T]) bool {
	seg, i := m.seg, m.idx
	if seg == nil {
		if seg = q.first.Load(); seg == nil {
			return false
		}
		i = 0
	}
	if int(i) == len(seg.slots) {
		if seg = seg.next.Load(); seg == nil {
			return false
		}
		i = 0
	}
	return seg.slots[i].ready.Load() != 0
}
