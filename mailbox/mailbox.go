package mailbox

import (
	"sync/atomic"

	"github.com/fraktor-go/fraktor/internal/queue"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Mailbox status values.
const (
	statusIdle      uint32 = iota // no work, not in any ready queue
	statusScheduled               // handed to the dispatcher, or running
	statusClosed                  // the owner stopped; posts go to the sink
	statusDraining                // someone is moving queued posts to the sink
	statusDeferred                // waits for a resume timer; system posts wake it
)

// Bits of Mailbox.flags.
const (
	flagSuspended uint32 = 1 << iota // Suspend: user messages are not scheduled
	flagStop                         // MarkStop: a stop of the owner is queued or under way
)

// Mailbox pairs a system queue with a user queue and keeps the scheduling
// status: the post that moves it from idle to scheduled hands it to the
// dispatcher, so a mailbox is in a ready queue at most once and has at most
// one consumer at a time. System messages are processed first and are
// delivered even while the mailbox is suspended.
//
// The consumer (the invoker, while the mailbox is scheduled) calls PopSystem,
// PopUser, Suspend, Resume and Close; the executor calls SetIdle; anyone calls
// PostUser and PostSystem.
type Mailbox[T any] struct {
	status     atomic.Uint32
	flags      atomic.Uint32 // flagSuspended, flagStop
	sys        queue.InlineMPSC[T]
	user       queue.RingMPSC[T]
	custom     *customQueue[T] // nil for the default queue
	dispatcher scheduler.Dispatcher
	runnable   scheduler.Runnable
}

// customQueue is a user queue other than the default one, and where its
// drops go: apart, as few mailboxes have one.
type customQueue[T any] struct {
	q      Queue[T]
	onDrop func(T)
}

// New returns a mailbox whose user queue is custom, or the lock-free
// unbounded MPSC queue when custom is nil. onDrop receives values a bounded
// queue dropped (may be nil).
func New[T any](custom Queue[T], onDrop func(T)) *Mailbox[T] {
	m := &Mailbox[T]{}
	m.Init(custom, onDrop)
	return m
}

// Init prepares a zero Mailbox embedded in a larger struct, as New does.
func (m *Mailbox[T]) Init(custom Queue[T], onDrop func(T)) {
	if custom != nil {
		m.custom = &customQueue[T]{q: custom, onDrop: onDrop}
	}
	m.sys.Init()
}

// Attach sets where the mailbox schedules itself and what it schedules. It
// must be called before the first post.
func (m *Mailbox[T]) Attach(d scheduler.Dispatcher, r scheduler.Runnable) {
	m.dispatcher, m.runnable = d, r
}

// PostUser enqueues a user message; w is the worker the caller runs on, or
// nil. It returns ErrFull when a bounded queue with the Reject policy is full.
// On a closed mailbox it hands v to the sink on the caller's goroutine
// instead, before it returns.
func (m *Mailbox[T]) PostUser(w *scheduler.Worker, v T) error {
	if m.Closed() {
		m.runnable.(Sink[T]).Sink(v)
		return nil
	}
	if err := m.push(v); err != nil {
		return err
	}
	m.afterPost(w, false)
	return nil
}

// PostUsers enqueues vs in order, as PostUser does each, with one
// schedule check for all of them: a poster with a run of messages for one
// mailbox (a connection's reader) pays the queue's ticket CAS and the
// status check once per run. It reports false, having done nothing, when
// the user queue is a custom one: the caller posts them one by one with
// PostUser, which reports a bounded queue's refusals. On a closed mailbox
// it hands each to the sink, as PostUser does.
func (m *Mailbox[T]) PostUsers(w *scheduler.Worker, vs []T) bool {
	if m.custom != nil {
		return false
	}
	if m.Closed() {
		sink := m.runnable.(Sink[T])
		for _, v := range vs {
			sink.Sink(v)
		}
		return true
	}
	m.user.PushAll(vs)
	m.afterPost(w, false)
	return true
}

// push enqueues a user message on the user queue.
func (m *Mailbox[T]) push(v T) error {
	if m.custom == nil {
		m.user.Push(v)
		return nil
	}
	dropped, did, err := m.custom.q.Push(v)
	if err != nil {
		return err
	}
	if did && m.custom.onDrop != nil {
		m.custom.onDrop(dropped)
	}
	return nil
}

// PostUserClaim is PostUser for a caller that may run the mailbox's turn
// itself (a scheduler caller turn): when the post makes the mailbox
// runnable, the caller gets its scheduled status (claimed is true) and the
// mailbox is not handed to the dispatcher; the caller must then run the
// turn (scheduler.Coordinator.RunCallerTurn) or hand the runnable to the
// dispatcher. Otherwise it does what PostUser does.
func (m *Mailbox[T]) PostUserClaim(v T) (claimed bool, err error) {
	if m.Closed() {
		m.runnable.(Sink[T]).Sink(v)
		return false, nil
	}
	if err := m.push(v); err != nil {
		return false, err
	}
	if m.status.Load() == statusIdle && !m.Suspended() && m.status.CompareAndSwap(statusIdle, statusScheduled) {
		return true, nil
	}
	m.afterPost(nil, false)
	return false, nil
}

// PostSystemClaim is PostSystem with the claim of PostUserClaim: when the
// post makes the mailbox runnable, the caller gets its scheduled status
// (claimed is true) instead of the dispatcher, and must run the turn or
// hand the runnable to the dispatcher. Otherwise it does what PostSystem
// does.
func (m *Mailbox[T]) PostSystemClaim(v T) (claimed bool) {
	if m.Closed() {
		m.runnable.(Sink[T]).Sink(v)
		return false
	}
	m.sys.Push(v)
	if m.status.Load() == statusIdle && m.status.CompareAndSwap(statusIdle, statusScheduled) {
		return true
	}
	m.afterPost(nil, true)
	return false
}

// Dispatcher returns the dispatcher the mailbox is attached to.
func (m *Mailbox[T]) Dispatcher() scheduler.Dispatcher { return m.dispatcher }

// PostSystem enqueues a system message; it is delivered even while the
// mailbox is suspended. On a closed mailbox it hands v to the sink on the
// caller's goroutine instead, before it returns.
func (m *Mailbox[T]) PostSystem(w *scheduler.Worker, v T) {
	if m.Closed() {
		m.runnable.(Sink[T]).Sink(v)
		return
	}
	m.sys.Push(v)
	m.afterPost(w, true)
}

func (m *Mailbox[T]) afterPost(w *scheduler.Worker, system bool) {
	switch m.status.Load() {
	case statusIdle:
		if (system || !m.Suspended()) && m.status.CompareAndSwap(statusIdle, statusScheduled) {
			m.dispatcher.ScheduleFrom(w, m.runnable)
		}
	case statusClosed:
		if m.status.CompareAndSwap(statusClosed, statusDraining) {
			m.drain()
		}
	case statusDeferred:
		if system && m.status.CompareAndSwap(statusDeferred, statusScheduled) {
			m.dispatcher.ScheduleFrom(w, m.runnable)
		}
	}
}

// Defer marks the mailbox as waiting for a resume timer (the executor's side
// of a timed suspension): user posts leave it alone, a system post schedules
// it. Called by the executor, which holds the consumer role until then.
//
// A system post that came after the invoker emptied the system queue found
// the mailbox scheduled and left it to the consumer; so, as SetIdle does,
// Defer checks again after the status change, and hands such a post's
// mailbox back to the dispatcher instead of leaving it to the timer (a
// rate limit must not delay a stop; TestMailboxDeferRechecksSystem).
func (m *Mailbox[T]) Defer() {
	m.sys.Release()
	m.user.Release()
	sm := m.sys.Mark()
	m.status.Store(statusDeferred)
	if m.sys.PublishedAfter(sm) && m.status.CompareAndSwap(statusDeferred, statusScheduled) {
		m.dispatcher.Schedule(m.runnable)
	}
}

// Wake ends a deferral when the resume timer fires; it reports whether the
// caller now owns the scheduled status (false when a system post woke the
// mailbox first).
func (m *Mailbox[T]) Wake() bool {
	return m.status.CompareAndSwap(statusDeferred, statusScheduled)
}

// PopSystem dequeues a system message. Consumer only.
func (m *Mailbox[T]) PopSystem() (T, bool) { return m.sys.Pop() }

// PopUser dequeues a user message. Consumer only.
func (m *Mailbox[T]) PopUser() (T, bool) {
	if m.custom != nil {
		return m.custom.q.Pop()
	}
	return m.user.Pop()
}

// HasSystem reports whether a system message is waiting. Consumer only.
func (m *Mailbox[T]) HasSystem() bool { return !m.sys.Empty() }

// UserLen returns the number of queued user messages (for metrics). Consumer
// only for the default queue; any goroutine for custom queues.
func (m *Mailbox[T]) UserLen() int {
	if m.custom != nil {
		return m.custom.q.Len()
	}
	return m.user.Len()
}

// SystemLen returns the number of queued system messages (for tests and
// diagnostics). Consumer only: the caller must be the consumer, or know
// that none runs (an owner blocked in its turn, with a happens-before
// edge from that turn to the call).
func (m *Mailbox[T]) SystemLen() int { return m.sys.Len() }

// UserBacklog returns the number of queued user messages as a poster sees
// it: any goroutine may call it (UserLen is the consumer's). For the
// default queue it may count up to a quarter of the queue's current ring
// more than are queued while the consumer runs, never fewer than the
// posts completed before the call and not yet taken (RingMPSC.Backlog);
// a custom queue answers with its Len. A poster that bounds what it
// queues (the remote extension's reader) checks it before it posts.
func (m *Mailbox[T]) UserBacklog() int {
	if m.custom != nil {
		return m.custom.q.Len()
	}
	return m.user.Backlog()
}

// Suspend stops user messages from being scheduled; system messages still
// are. Consumer only.
func (m *Mailbox[T]) Suspend() { m.flags.Or(flagSuspended) }

// Resume lets user messages run again.
func (m *Mailbox[T]) Resume() { m.flags.And(^flagSuspended) }

// Suspended reports whether the mailbox is suspended.
func (m *Mailbox[T]) Suspended() bool { return m.flags.Load()&flagSuspended != 0 }

// MarkStop records that a stop of the mailbox's owner is queued or under
// way, and reports whether this call recorded it (false: an earlier one
// did). The mark is never cleared. The owner queues a stop only when it is
// the first to mark it, so that any number of stops hold one system
// message: an actor stuck in its Receive while a peer sends it stop after
// stop holds one (actor.cell). Safe from any goroutine.
func (m *Mailbox[T]) MarkStop() bool { return m.flags.Or(flagStop)&flagStop == 0 }

// StopMarked reports whether MarkStop has been called.
func (m *Mailbox[T]) StopMarked() bool { return m.flags.Load()&flagStop != 0 }

// SetIdle implements the executor side of scheduler.Runnable: it marks the
// mailbox idle and, when work arrived meanwhile, re-claims it and reports
// true. Called by the executor right after an invocation, which is when the
// caller still owns the consumer role; the re-check after the status change
// reads only atomics.
func (m *Mailbox[T]) SetIdle() bool {
	m.sys.Release()
	m.user.Release()
	sm, um := m.sys.Mark(), m.user.Mark()
	m.status.Store(statusIdle)
	return m.pending(sm, um) && m.status.CompareAndSwap(statusIdle, statusScheduled)
}

func (m *Mailbox[T]) pending(sm queue.Mark[T], um queue.RingMark[T]) bool {
	if m.sys.PublishedAfter(sm) {
		return true
	}
	if m.Suspended() {
		return false
	}
	if m.custom != nil {
		return !m.custom.q.Empty()
	}
	return m.user.PublishedAfter(um)
}

// Sink takes the messages of a closed mailbox (dead letters). It is called
// on the goroutine of whoever drains the mailbox or posts to it after Close,
// possibly by several goroutines at once, and must not block.
type Sink[T any] interface{ Sink(v T) }

// Close ends the mailbox: everything queued goes to the sink (dead letters),
// and everything posted from now on goes to the sink on the poster's side.
// Consumer only; call it once, from the final invocation. After Close the
// mailbox is never scheduled again.
//
// The drain is bounded by what was queued when Close began plus at most one
// post per goroutine that was posting at that moment: a post that finds the
// mailbox closed is never queued, so senders that keep posting cannot keep
// the drain going.
//
// The sink is the attached runnable, which must implement Sink[T]: the
// mailbox keeps no field for it.
func (m *Mailbox[T]) Close() {
	m.Resume()
	m.status.Store(statusDraining)
	m.drain()
}

// drain moves every queued message to the sink; the caller holds the
// draining status. A post that read the status before Close stored it may
// still be queued after the loop emptied the queues; the re-check after the
// status is back at closed hands it to its poster (afterPost) or takes it
// here.
func (m *Mailbox[T]) drain() {
	sink := m.runnable.(Sink[T])
	for {
		for v, ok := m.sys.Pop(); ok; v, ok = m.sys.Pop() {
			sink.Sink(v)
		}
		for v, ok := m.PopUser(); ok; v, ok = m.PopUser() {
			sink.Sink(v)
		}
		m.sys.Release()
		m.user.Release()
		// The ring a backlog grew is of no use any more; the owner's cell
		// is kept by whoever holds its PID, and kept the ring with it
		// (TestNewuser10StoppedActorGivesItsRingBack, actor).
		m.user.Drop()
		sm, um := m.sys.Mark(), m.user.Mark()
		m.status.Store(statusClosed)
		if !m.pending(sm, um) || !m.status.CompareAndSwap(statusClosed, statusDraining) {
			return
		}
	}
}

// Closed reports whether Close has been called.
func (m *Mailbox[T]) Closed() bool {
	s := m.status.Load()
	return s == statusClosed || s == statusDraining
}
