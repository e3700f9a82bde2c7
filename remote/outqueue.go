package remote

import (
	"runtime"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/queue"
)

// outItem is one envelope waiting for its endpoint's writer: the message
// (encoded by the writer, with codec; an *actor.MessageEnvelope is the
// message it carries, with its header on the wire), its target and sender (nil: none),
// and the bytes it counts for in the queue's byte bound (see
// typeCodec.estimate). It is six words, so that a deep queue stays small in
// the cache.
type outItem struct {
	target, sender *actor.PID
	msg            any
	codec          *typeCodec
	size           int64
}

// envelope is the Envelope of it, as the Undelivered hook reports it.
func (it *outItem) envelope(n *Node) Envelope {
	msg, h := actor.UnwrapEnvelope(it.msg)
	return Envelope{Target: n.wireRef(it.target), Sender: n.wireRef(it.sender), Header: h, Message: msg}
}

// body is the message to encode and its header (nil: none).
func (it *outItem) body() (any, actor.Header) { return actor.UnwrapEnvelope(it.msg) }

func (it *outItem) typeName() string { return it.codec.name }

// outQueue is an endpoint's bounded outbound queue: many senders, one
// consumer (the endpoint's goroutine).
//
// It is bounded twice: by count (limit items) and by bytes (limitBytes,
// the sum of the items' size estimates). The items are not encoded yet, so
// the byte bound counts estimates (typeCodec.estimate); what is encoded is
// the writer's one frame, bounded by batchTarget or, for a single envelope,
// MaxFrameSize. An item alone in an empty queue is taken whatever its
// estimate, so a message that fits a frame is never refused by an idle peer.
//
// Senders do not lock: a send is two atomic adds (the bounds), the lock-free
// push of queue.RingMPSC, and one atomic load (is the consumer parked?).
// The counts cover every item from its push until the consumer released it
// (written, or handed to Undelivered), so an item the consumer holds while
// it waits for a connection still counts. A closed queue refuses new items;
// the consumer then drains what it holds.
//
// Parking follows the mailbox's idle/scheduled protocol: the consumer sets
// waiting, then looks at the ring again; a sender pushes, then reads
// waiting. One of the two sees the other (sequentially consistent atomics),
// so an item is never left behind a parked consumer.
type outQueue struct {
	ring       queue.RingMPSC[outItem]
	count      atomic.Int64 // items pushed and not released; closedCount once closed
	bytes      atomic.Int64 // size estimates of the items counted
	waiting    atomic.Bool  // the consumer is parked (or about to) on ready
	full       atomic.Bool  // a refusal was reported and the queue has not drained below half since
	limit      int64
	limitBytes int64
	ready      chan struct{} // capacity 1: something was pushed while waiting
}

// closedCount marks a closed queue in count.
const closedCount = int64(1) << 62

func newOutQueue(limit int, limitBytes int64) *outQueue {
	return &outQueue{limit: int64(limit), limitBytes: limitBytes, ready: make(chan struct{}, 1)}
}

// push adds it: errEndpointGone once closed, ErrQueueFull when limit items
// are pending or it.size more bytes would exceed limitBytes.
func (q *outQueue) push(it outItem) error {
	c := q.count.Add(1)
	if c >= closedCount {
		q.count.Add(-1)
		return errEndpointGone
	}
	if c > q.limit {
		q.count.Add(-1)
		return ErrQueueFull
	}
	if b := q.bytes.Add(it.size); b > q.limitBytes && b != it.size {
		q.bytes.Add(-it.size)
		q.count.Add(-1)
		return ErrQueueFull
	}
	q.ring.Push(it)
	if q.waiting.Load() && q.waiting.CompareAndSwap(true, false) {
		select {
		case q.ready <- struct{}{}:
		default:
		}
	}
	return nil
}

// pop takes the oldest pushed item, if any. The item stays counted until
// release. Consumer only.
func (q *outQueue) pop() (outItem, bool) { return q.ring.Pop() }

// release uncounts n popped items of size bytes in all that were written or
// handed over, and ends a full episode once the queue is below half of both
// bounds. Consumer only.
func (q *outQueue) release(n int, size int64) {
	if n > 0 {
		q.bytes.Add(-size)
		c := q.count.Add(-int64(n))
		if q.full.Load() && c&^closedCount < q.limit/2 && q.bytes.Load() < q.limitBytes/2 {
			q.full.Store(false)
		}
	}
}

// markFull records a refusal and reports whether it starts a full episode
// (the first refusal since the queue was last below half of its bounds).
func (q *outQueue) markFull() bool {
	return !q.full.Load() && q.full.CompareAndSwap(false, true)
}

// bytesPending reports the size estimates of the items pending.
func (q *outQueue) bytesPending() int64 { return q.bytes.Load() }

// pending reports the items pushed (or being pushed) and not released,
// including any the consumer holds.
func (q *outQueue) pending() int64 { return q.count.Load() &^ closedCount }

// park prepares the consumer to wait on q.ready: it reports false (do not
// wait) when an item is already there. After a true answer, a later push
// sends on ready; a wake-up from something else may leave a stale signal
// there, which costs the consumer one empty look. Consumer only.
func (q *outQueue) park() bool {
	q.ring.Release() // publish the consumer's position (and in time give back a burst's ring)
	q.waiting.Store(true)
	if !q.ring.Empty() {
		q.waiting.Store(false)
		return false
	}
	return true
}

// close refuses later pushes. Consumer only, or with the consumer stopped.
func (q *outQueue) close() {
	for {
		c := q.count.Load()
		if c >= closedCount || q.count.CompareAndSwap(c, c|closedCount) {
			return
		}
	}
}

// closeIfIdle closes the queue only if nothing was ever pending or all was
// released, reporting whether it did.
func (q *outQueue) closeIfIdle() bool { return q.count.CompareAndSwap(0, closedCount) }

// drain hands every item still in the ring to fn and releases it; the
// consumer must have released what it holds outside the ring. It must
// follow close, so it ends: a sender counted before close finishes its push
// in a few instructions, and drain waits for that push (or for a refused
// sender to take its count back).
func (q *outQueue) drain(fn func(outItem)) {
	for q.pending() > 0 {
		it, ok := q.pop()
		if !ok {
			runtime.Gosched() // a sender is between its count and its push
			continue
		}
		fn(it)
		q.release(1, it.size)
	}
}
