package queue

import "sync/atomic"

const (
	ringFirst  = 8     // slots of the first ring
	ringMax    = 16384 // rings grow ×2 on overflow up to this (given back when idle)
	closedBit  = uint64(1) << 63
	ticketMask = closedBit - 1
)

type rslot[T any] struct {
	seq atomic.Uint64 // ticket+1 once the value of that ticket is published
	val T
}

type ringSeg[T any] struct {
	// Read-mostly: written once.
	slots   []rslot[T]
	mask    uint64
	pubMask uint64
	next    atomic.Pointer[ringSeg[T]]
	_       [64 - 24 - 8 - 8 - 8]byte

	// Written by producers on every push.
	enq    atomic.Uint64 // next ticket; closedBit once full (frozen)
	deqPub atomic.Uint64 // the consumer's position, published every pubEvery pops
	_      [64 - 16]byte

	// The consumer's own.
	deq    uint64 // consumer only
	relDeq uint64 // consumer only: deq at the last Release
	quiet  uint32 // consumer only: Releases in a row after a quiet activation
	peak   uint64 // consumer only: the most taken by one of those activations
}

// keepAfter is the number of activations that took values after which a
// queue keeps its first-size ring when it goes idle. Until then Release
// gives the empty ring back, so an actor that received one message and went
// idle holds no ring (most actors of a large population); a busy queue
// allocates at most keepAfter rings before it keeps one for good. A second
// activation is the sign of an actor that keeps hearing from others: with 4,
// SkyNet's parents, which hear from ten children one or two at a time,
// started three or four rings each (a fifth of SkyNet's bytes).
const keepAfter = 2

// shrinkAfter is the number of quiet activations in a row (each consuming
// at most an eighth of the ring) after which Release gives a grown ring
// back. A longer count keeps a ring that bursts regrow (64 allocates a tenth
// of the rings in the two-process benchmark's sink), but a large ring over
// a small backlog walks through more memory than the caches hold: with 64,
// a one-way stream that the consumer keeps up with (BenchmarkTell) costs
// 28-39 ns a message instead of 19-23.
const shrinkAfter = 8

// newRingSeg returns a ring of n slots (a power of two). Zeroed slots need no
// initialization: a slot's seq is ticket+1 only once that ticket's value is
// published, and 0 is nobody's ticket+1.
//
// The rings a queue starts with and first grows to (up to 32 slots) are one
// allocation with their slots: a young queue gives its ring back when it
// goes idle (Release), so an actor that hears from its children one at a
// time starts a ring per message for its first activations; two
// allocations each doubled that (SkyNet's parents made eight per actor).
// TestRingSegOneAllocation pins it.
func newRingSeg[T any](n int) *ringSeg[T] {
	var r *ringSeg[T]
	switch n {
	case ringFirst:
		x := &struct {
			r ringSeg[T]
			a [ringFirst]rslot[T]
		}{}
		r = &x.r
		r.slots = x.a[:]
	case 2 * ringFirst:
		x := &struct {
			r ringSeg[T]
			a [2 * ringFirst]rslot[T]
		}{}
		r = &x.r
		r.slots = x.a[:]
	case 4 * ringFirst:
		x := &struct {
			r ringSeg[T]
			a [4 * ringFirst]rslot[T]
		}{}
		r = &x.r
		r.slots = x.a[:]
	default:
		r = &ringSeg[T]{slots: make([]rslot[T], n)}
	}
	r.mask, r.pubMask = uint64(n-1), uint64(max(n/4, 1)-1)
	return r
}

// RingMPSC is an unbounded lock-free multi-producer single-consumer FIFO made
// of reusable rings. A producer takes a ticket with a CAS, writes its slot and
// publishes it by storing ticket+1 in the slot's sequence word; the consumer
// reads slots in ticket order and publishes its own position every quarter
// ring, which is how producers know a slot of the previous lap is free. The
// current ring is reused lap after lap, so a steady stream of messages
// allocates nothing, and the consumer does no atomic write per message. When a
// producer finds the ring full it closes it (a bit in the ticket counter,
// set with a CAS, freezes it) and links a ring twice the size; the consumer
// drains the closed ring, then moves on and drops it. Closed rings are never
// reused, so there is no ABA hazard.
//
// Push may be called from any goroutine. Pop, Empty, Len, Mark must be called
// by one consumer at a time.
//
// A young queue (fewer than keepAfter activations that took values) gives
// its empty first-size ring back at Release: the consumer closes it, links
// it to itself, which marks it dropped, and clears the queue's pointers; a
// producer that finds a dropped ring starts a new first ring, as the first
// push does.
type RingMPSC[T any] struct {
	tail  atomic.Pointer[ringSeg[T]]
	first atomic.Pointer[ringSeg[T]] // the consumer's ring: nothing before it stays reachable
	head  *ringSeg[T]                // consumer only
	busy  uint32                     // consumer only: activations that took values, up to keepAfter
}

// Push enqueues v. It never blocks and never fails.
func (q *RingMPSC[T]) Push(v T) {
	r := q.tail.Load()
	if r == nil {
		r = q.init()
	}
	for {
		e := r.enq.Load()
		if e&closedBit != 0 {
			r = q.advance(r)
			continue
		}
		if e-r.deqPub.Load() >= uint64(len(r.slots)) {
			// The slot may still hold the previous lap's value: full (or the
			// consumer has not published its position lately). Close it.
			r.enq.CompareAndSwap(e, e|closedBit)
			continue
		}
		if r.enq.CompareAndSwap(e, e+1) {
			s := &r.slots[e&r.mask]
			s.val = v
			s.seq.Store(e + 1)
			return
		}
		// Another producer took the ticket; reload.
	}
}

// PushAll enqueues vs in order, as len(vs) Pushes by one producer would,
// but takes the tickets of a run with one CAS: a producer with several
// values for one queue (a connection's reader with a run of envelopes for
// one actor) pays the contended read-modify-write once per run rather than
// once per value. Other producers' values do not interleave with a run
// that fits the ring; a run larger than the ring's free slots is split
// where the ring closes and continues in the next one.
func (q *RingMPSC[T]) PushAll(vs []T) {
	r := q.tail.Load()
	if r == nil && len(vs) > 0 {
		r = q.init()
	}
	for len(vs) > 0 {
		e := r.enq.Load()
		if e&closedBit != 0 {
			r = q.advance(r)
			continue
		}
		used := e - r.deqPub.Load()
		if used >= uint64(len(r.slots)) {
			r.enq.CompareAndSwap(e, e|closedBit) // full: as in Push
			continue
		}
		k := min(uint64(len(vs)), uint64(len(r.slots))-used)
		if !r.enq.CompareAndSwap(e, e+k) {
			continue // another producer took tickets; reload
		}
		for i := range k {
			s := &r.slots[(e+i)&r.mask]
			s.val = vs[i]
			s.seq.Store(e + i + 1)
		}
		vs = vs[k:]
	}
}

// init returns the tail ring, starting a first ring when there is none.
func (q *RingMPSC[T]) init() *ringSeg[T] {
	var fresh *ringSeg[T]
	for {
		if r := q.tail.Load(); r != nil {
			return r
		}
		if fresh == nil {
			fresh = newRingSeg[T](ringFirst)
		}
		if q.tail.CompareAndSwap(nil, fresh) {
			q.first.Store(fresh)
			return fresh
		}
	}
}

// advance returns the ring after the closed ring r, linking one if needed.
func (q *RingMPSC[T]) advance(r *ringSeg[T]) *ringSeg[T] {
	next := r.next.Load()
	if next == r {
		// Dropped by the consumer: it is no longer the tail (help the
		// consumer clear it) and the next push starts a first ring.
		q.tail.CompareAndSwap(r, nil)
		return q.init()
	}
	if next == nil {
		// A producer that finds the ring closed before the consumer (shrinking
		// it) linked the small one links a bigger one instead: harmless.
		n := newRingSeg[T](min(2*len(r.slots), ringMax))
		if r.next.CompareAndSwap(nil, n) {
			next = n
		} else {
			next = r.next.Load()
		}
	}
	q.tail.CompareAndSwap(r, next)
	return next
}

func (q *RingMPSC[T]) headRing() *ringSeg[T] {
	if q.head == nil {
		q.head = q.first.Load()
	}
	return q.head
}

// Pop dequeues the oldest published value.
func (q *RingMPSC[T]) Pop() (T, bool) {
	var zero T
	r := q.headRing()
	for r != nil {
		d := r.deq
		s := &r.slots[d&r.mask]
		if s.seq.Load() == d+1 {
			v := s.val
			s.val = zero
			r.deq = d + 1
			// Producers learn that slots are free in batches: one atomic
			// store per quarter ring, not one per message.
			if (d+1)&r.pubMask == 0 {
				r.deqPub.Store(d + 1)
			}
			return v, true
		}
		// Not ready: empty, or a producer is mid-write. A closed ring whose
		// every ticket was consumed gives way to the next one.
		e := r.enq.Load()
		if e&closedBit == 0 || d != e&ticketMask {
			return zero, false
		}
		next := r.next.Load()
		if next == nil {
			return zero, false
		}
		q.head, r = next, next
		q.first.Store(next) // the drained ring, and the chain behind it, become garbage
	}
	return zero, false
}

// Empty reports whether Pop would find nothing now.
func (q *RingMPSC[T]) Empty() bool {
	r := q.headRing()
	for r != nil {
		d := r.deq
		if r.slots[d&r.mask].seq.Load() == d+1 {
			return false
		}
		e := r.enq.Load()
		if e&closedBit == 0 || d != e&ticketMask {
			return true
		}
		r = r.next.Load()
	}
	return true
}

// Len returns the number of values claimed and not yet consumed in the
// current and later rings. Consumer only; for metrics.
func (q *RingMPSC[T]) Len() int {
	n := 0
	for r := q.headRing(); r != nil; r = r.next.Load() {
		n += int(r.enq.Load()&ticketMask) - int(r.deq)
	}
	return max(n, 0)
}

// Backlog returns the number of values queued as a producer can see it:
// it reads atomics only, so any goroutine may call it while others push
// and the consumer pops. It counts from the consumer's published position
// (Pop publishes it every quarter ring, Release whenever the consumer goes
// idle), so while the consumer is active it may count up to a quarter of
// the ring it reads more than are queued; once the consumer has gone idle
// it is exact for the values pushed before. Values whose push had
// completed before the call and that no Pop has taken are all counted,
// except while a producer starts a first ring after the queue gave its
// ring back (a few values then, pushed concurrently with the call). A
// producer that must not let a queue grow past a bound (a connection's
// reader) checks it before it pushes: Len is the consumer's.
func (q *RingMPSC[T]) Backlog() int {
	n := uint64(0)
	for r := q.first.Load(); r != nil; {
		// The consumer's position first: it never passes the tickets
		// taken, so tickets loaded after it are at least as many.
		d := r.deqPub.Load()
		n += r.enq.Load()&ticketMask - d
		next := r.next.Load()
		if next == r { // dropped: it was empty and last
			break
		}
		r = next
	}
	return int(min(n, uint64(maxBacklog)))
}

// maxBacklog caps what Backlog returns (an int on every platform).
const maxBacklog = 1<<31 - 1

// RingMark is a consumer position (see MPSC.Mark).
type RingMark[T any] struct {
	r *ringSeg[T]
	d uint64
}

// Mark returns the consumer's position. Consumer only.
func (q *RingMPSC[T]) Mark() RingMark[T] {
	r := q.headRing()
	if r == nil {
		return RingMark[T]{}
	}
	return RingMark[T]{r: r, d: r.deq}
}

// PublishedAfter reports whether a value was published at or after m. It
// reads atomics only, so it is safe after the caller gave up the consumer
// role. It may answer true for a value a later consumer already took (a
// spurious schedule is harmless); it never answers false for a value that
// nobody has consumed.
func (q *RingMPSC[T]) PublishedAfter(m RingMark[T]) bool {
	r, d := m.r, m.d
	if r == nil {
		if r = q.first.Load(); r == nil {
			return false
		}
		d = 0
	}
	for r != nil {
		if r.slots[d&r.mask].seq.Load() > d {
			return true
		}
		e := r.enq.Load()
		if e&closedBit == 0 || d < e&ticketMask {
			return false
		}
		next := r.next.Load()
		if next == r {
			return true // dropped since the mark: spurious, harmless
		}
		r, d = next, 0
	}
	return false
}

// Release is called when the consumer goes idle. It publishes the
// consumer's position (Pop does so only every quarter ring), so producers
// see every consumed slot as free.
//
// It also gives back a ring that grew during a burst, with hysteresis: a
// consumer that goes idle between the bursts of a busy stream would
// otherwise drop its ring at every pause and grow it again, allocating, at
// the next burst. The ring goes back only after shrinkAfter idle periods in
// a row in which the consumer took at most an eighth of it; the consumer
// then closes it (the same CAS producers use) and links a smaller ring, of
// four times the most it took in one of those periods (at least the first
// size).
// A consumer that goes idle for good right after a burst keeps its grown
// ring (bounded by the burst) until it becomes active again. Consumer only.
func (q *RingMPSC[T]) Release() {
	r := q.head
	if r == nil {
		return
	}
	if r.deqPub.Load() != r.deq {
		r.deqPub.Store(r.deq) // all consumed slots are free again
	}
	took := r.deq - r.relDeq
	r.relDeq = r.deq
	if q.busy < keepAfter {
		if took > 0 {
			q.busy++
		}
		if q.busy < keepAfter && len(r.slots) == ringFirst && q.drop(r) {
			return
		}
	}
	if len(r.slots) <= ringFirst || r.next.Load() != nil {
		return
	}
	if took*8 > uint64(len(r.slots)) {
		r.quiet, r.peak = 0, 0
		return
	}
	r.peak = max(r.peak, took)
	if r.quiet++; r.quiet < shrinkAfter {
		return
	}
	// The replacement holds four times the largest activation of the quiet
	// periods: a stream that is steady but lighter than the burst that grew
	// the ring does not shrink to the first size, only to grow again
	// (allocating a ring per doubling) at its next few pushes.
	n := ringFirst
	for uint64(n) < 4*r.peak { // at most half the ring: peak <= len/8
		n *= 2
	}
	if !r.enq.CompareAndSwap(r.deq, r.deq|closedBit) {
		return // not empty, or a producer is mid-push: keep it
	}
	small := newRingSeg[T](n)
	if !r.next.CompareAndSwap(nil, small) {
		small = r.next.Load()
	}
	q.tail.CompareAndSwap(r, small)
	q.head = small
	q.first.Store(small)
}

// drop gives the consumer's ring r back when it is empty and last: closed
// (so no producer writes it any more) and linked to itself (so a producer
// that finds it closed starts a new first ring instead of linking a bigger
// one after it). It reports whether r was dropped; a ring a producer is
// pushing to, or one a producer linked a successor to first, stays (Pop
// moves past a closed, drained ring). Consumer only.
func (q *RingMPSC[T]) drop(r *ringSeg[T]) bool {
	if r.next.Load() != nil || !r.enq.CompareAndSwap(r.deq, r.deq|closedBit) {
		return false
	}
	if !r.next.CompareAndSwap(nil, r) {
		return false
	}
	q.tail.CompareAndSwap(r, nil)
	q.first.CompareAndSwap(r, nil)
	q.head = nil
	return true
}

// Drop gives the consumer's ring back, whatever its size, when it is empty
// and last (see drop); a queue whose owner is gone calls it (a closed
// mailbox), so that whoever still holds the owner does not hold its ring.
// A later push starts a first ring, as the first push does. Consumer only.
func (q *RingMPSC[T]) Drop() {
	if r := q.headRing(); r != nil {
		q.drop(r)
	}
}

// Cap returns the number of slots of the ring the consumer reads (0 before
// the first push). Consumer only; for tests and metrics.
func (q *RingMPSC[T]) Cap() int {
	if r := q.headRing(); r != nil {
		return len(r.slots)
	}
	return 0
}
