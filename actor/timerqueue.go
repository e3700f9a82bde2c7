package actor

import (
	"math"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// timerQueue is the system's one timer facility: actor timers (SendAfter,
// SendEvery, Timers) and request timeouts (RequestFuture) are nodes of one
// min-heap ordered by deadline, and one timer on the system's Clock is
// set for the earliest deadline. So an armed timer costs its node in the
// heap and no goroutine and no runtime timer, and virtual time (a
// ManualClock) fires them deterministically: in deadline order, ties in
// the order they were armed.
//
// Deadlines are nanoseconds since base, the clock's time when the queue was
// made. Arming and cancelling take the queue's lock: O(log n) each.
// Targets run on the clock's goroutine, outside the lock, one at a time per
// firing; they must not block.
type timerQueue struct {
	clock scheduler.Clock
	base  time.Time

	mu      sync.Mutex
	heap    []*timerNode
	waits   []*timerNode // armed by armClose: they hear of close only
	seq     uint64
	closed  bool
	armed   bool   // a clock timer is set for armedAt
	armedAt int64  // its deadline
	token   uint64 // identifies the clock timer last set
	stop    func() bool
	firing  sync.WaitGroup // clock timers set and not yet stopped or run
}

// timerTarget is what a timerNode fires: a future's timeout, an actor
// timer's tick. fireTimer runs on the clock's goroutine and must not block.
type timerTarget interface{ fireTimer() }

// timerNode is one armed timer. Its fields belong to the queue (guarded by
// its lock) from arm until it fires or is cancelled; a node is embedded in
// what it fires (a Future, an actorTimer), so arming allocates nothing.
type timerNode struct {
	at     int64 // deadline, ns since the queue's base
	seq    uint64
	period int64 // > 0: re-armed period ns later each time it fires
	index  int32 // position in the heap (in waits when wait); -1 when not armed
	wait   bool  // armed by armClose
	target timerTarget
}

func newTimerQueue(clock scheduler.Clock) *timerQueue {
	return &timerQueue{clock: clock, base: clock.Now()}
}

// now returns the clock's time as a deadline.
func (q *timerQueue) now() int64 { return int64(q.clock.Now().Sub(q.base)) }

// arm queues n to fire after d (and every period after that, when period
// > 0). It reports false when the queue is closed (the system shut down).
// n must not be armed.
func (q *timerQueue) arm(n *timerNode, d, period time.Duration) bool {
	at := later(q.now(), d)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		n.index = -1
		return false
	}
	n.at, n.period = at, int64(period)
	q.push(n)
	if !q.armed || at < q.armedAt {
		q.setClock(at)
	}
	return true
}

// armClose queues n, whose target is a timerCloser, to hear of the queue's
// close and of nothing else: it never fires, so it takes no place in the
// heap and sets no clock timer. It is how a future without a timeout that
// someone waits for fails at Shutdown (Future.watchClose). It reports
// false when the queue is closed. n must not be armed.
func (q *timerQueue) armClose(n *timerNode) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		n.index = -1
		return false
	}
	n.wait = true
	n.index = int32(len(q.waits))
	q.waits = append(q.waits, n)
	return true
}

// later returns the deadline d after at; a negative d is at. A sum past
// the largest deadline is that deadline, which no clock reaches: without
// the cap a "no timeout" of math.MaxInt64 wrapped to a deadline in the
// past, which fired with the next timer and, at the top of the heap with
// the clock set ~292 years ahead, kept every timer armed after it from
// firing (TestTimerQueueHugeDurations).
func later(at int64, d time.Duration) int64 {
	if d <= 0 {
		return at
	}
	if int64(d) > math.MaxInt64-at {
		return math.MaxInt64
	}
	return at + int64(d)
}

// cancel takes n out of the queue and reports whether it was armed: false
// when it fired already (a periodic node is re-armed before it fires, so
// cancel stops it for good) or was never armed.
func (q *timerQueue) cancel(n *timerNode) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n.index < 0 {
		return false
	}
	if n.wait {
		i, last := int(n.index), len(q.waits)-1
		q.waits[i] = q.waits[last]
		q.waits[i].index = int32(i)
		q.waits[last] = nil
		q.waits = q.waits[:last]
		n.index, n.wait = -1, false
		if last == 0 && cap(q.waits) > 1024 {
			q.waits = nil
		}
		return true
	}
	q.remove(int(n.index))
	return true
}

// len returns the number of armed nodes.
func (q *timerQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.heap)
}

// timerCloser is a timerTarget that must hear of the queue's close: a
// request's timeout, whose waiter would otherwise wait for good.
type timerCloser interface{ closeTimer() }

// close drops every armed node (none of them fires), stops the clock timer
// and waits for a firing under way; then it tells the targets that are
// timerClosers. It is idempotent.
func (q *timerQueue) close() {
	q.mu.Lock()
	q.closed = true
	var closers []timerCloser
	for i, n := range q.heap {
		n.index = -1
		q.heap[i] = nil
		if c, ok := n.target.(timerCloser); ok {
			closers = append(closers, c)
		}
	}
	q.heap = nil
	for i, n := range q.waits {
		n.index, n.wait = -1, false
		q.waits[i] = nil
		closers = append(closers, n.target.(timerCloser))
	}
	q.waits = nil
	if q.armed && q.stop() {
		q.firing.Done()
	}
	q.armed = false
	q.mu.Unlock()
	q.firing.Wait()
	for _, c := range closers {
		c.closeTimer()
	}
}

// setClock sets the clock timer for deadline at, stopping the previous
// one. Called with mu held. A previous timer that could not be stopped is
// already firing; it finds nothing extra to do.
func (q *timerQueue) setClock(at int64) {
	if q.armed && q.stop() {
		q.firing.Done()
	}
	q.token++
	token := q.token
	q.armed, q.armedAt = true, at
	q.firing.Add(1)
	q.stop = q.clock.AfterFunc(time.Duration(at-q.now()), func() { q.run(token) })
}

// run is the clock timer's callback: it fires every node that is due, one
// at a time and outside the lock, then sets the clock for the next.
func (q *timerQueue) run(token uint64) {
	defer q.firing.Done()
	q.mu.Lock()
	if token == q.token {
		q.armed = false
	}
	for !q.closed && len(q.heap) > 0 {
		now := q.now()
		n := q.heap[0]
		if n.at > now {
			if !q.armed || n.at < q.armedAt {
				q.setClock(n.at)
			}
			break
		}
		if n.period > 0 {
			// Re-armed before it fires, so a cancel that races with the
			// firing stops it for good. A clock that ran late skips the
			// periods it missed rather than firing a burst.
			n.at = later(n.at, time.Duration(n.period))
			if n.at <= now {
				n.at = later(now, time.Duration(n.period))
			}
			q.seq++
			n.seq = q.seq
			q.fix(0)
		} else {
			q.remove(0)
		}
		t := n.target
		q.mu.Unlock()
		t.fireTimer()
		q.mu.Lock()
	}
	q.mu.Unlock()
}

// The heap: ordered by (at, seq); each node knows its index.

func (q *timerQueue) less(i, j int) bool {
	a, b := q.heap[i], q.heap[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *timerQueue) swap(i, j int) {
	h := q.heap
	h[i], h[j] = h[j], h[i]
	h[i].index = int32(i)
	h[j].index = int32(j)
}

func (q *timerQueue) push(n *timerNode) {
	q.seq++
	n.seq = q.seq
	n.index = int32(len(q.heap))
	q.heap = append(q.heap, n)
	q.up(len(q.heap) - 1)
}

func (q *timerQueue) remove(i int) {
	last := len(q.heap) - 1
	n := q.heap[i]
	if i != last {
		q.swap(i, last)
	}
	q.heap[last] = nil
	q.heap = q.heap[:last]
	n.index = -1
	if i != last {
		q.fix(i)
	}
	if len(q.heap) == 0 && cap(q.heap) > 1024 {
		q.heap = nil // give a burst's memory back
	}
}

func (q *timerQueue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *timerQueue) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !q.less(i, p) {
			return
		}
		q.swap(i, p)
		i = p
	}
}

func (q *timerQueue) down(i int) bool {
	start, n := i, len(q.heap)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.less(r, l) {
			m = r
		}
		if !q.less(m, i) {
			break
		}
		q.swap(i, m)
		i = m
	}
	return i > start
}
