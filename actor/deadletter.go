package actor

import (
	"sync/atomic"
	"time"
)

// DeadLetterEvent is published on the EventStream for every message that
// could not be delivered. Reason is nil for a target that does not exist,
// or says why (for example ErrMailboxFull).
type DeadLetterEvent struct {
	PID     *PID
	Message any
	Sender  *PID
	Reason  error
}

// deadLetters is the process of PIDs that resolve to nothing.
//
// Senders of a storm to a stopped actor all come through here at once, so
// the log throttle takes no lock: next is read by every dead letter and
// written once per interval, and the number suppressed is derived from
// count rather than kept in a second contended counter.
type deadLetters struct {
	sys    *System
	count  atomic.Uint64
	start  time.Time     // monotonic origin of next
	every  time.Duration // log at most once per every
	next   atomic.Int64  // offset from start at which the next record may be logged
	logged atomic.Uint64 // count at the last record
}

func newDeadLetters(s *System, every time.Duration) *deadLetters {
	if every <= 0 {
		every = time.Second
	}
	return &deadLetters{sys: s, start: time.Now(), every: every}
}

// logTurn reports whether the dead letter numbered n (its count) is logged,
// and how many were not logged since the last record.
func (d *deadLetters) logTurn(n uint64) (bool, uint64) {
	now := int64(time.Since(d.start))
	next := d.next.Load()
	if now < next || !d.next.CompareAndSwap(next, now+int64(d.every)) {
		return false, 0
	}
	prev := d.logged.Swap(n)
	if n <= prev {
		return true, 0
	}
	return true, n - prev - 1
}

func (d *deadLetters) SendUser(pid *PID, msg any, sender *PID) {
	d.sys.deadLetter(pid, msg, sender, nil)
}

func (d *deadLetters) SendSystem(pid *PID, m SystemMessage) {
	if w, ok := m.(*Watch); ok {
		d.sys.sendSystem(nil, w.Watcher, &TerminatedSystem{Terminated{Who: pid, Why: TerminatedNotFound}})
	}
}

func (d *deadLetters) StopProcess(*PID) {}

// deadLetter records an undeliverable message: counted, published, logged
// at most once per interval (with the number suppressed), and answered with
// DeadLetterResponse when the sender is a future (or on another node, which
// passes it on to a future), so the request fails fast.
func (s *System) deadLetter(pid *PID, msg any, sender *PID, reason error) {
	d := s.deadLetters
	n := d.count.Add(1)
	s.metrics.deadLetter()
	if sender != nil {
		if f, ok := sender.cached().(*Future); ok {
			if reason != nil {
				f.complete(nil, reason)
			} else {
				f.complete(&DeadLetterResponse{Target: pid}, nil)
			}
		} else if sender.Address != LocalAddress && sender.Address != s.Address() {
			// A sender on another node: its node tells the sender if it is a
			// waiting future, so that the request fails at once there too.
			s.send(nil, sender, &DeadLetterResponse{Target: pid}, nil)
		}
	}
	if s.events.Len() > 0 {
		s.events.Publish(&DeadLetterEvent{PID: pid, Message: msg, Sender: sender, Reason: reason})
	}
	if ok, suppressed := d.logTurn(n); ok {
		s.logger.Info("dead letter", "pid", pid.String(), "type", typeName(msg), "reason", reason, "suppressed", suppressed)
	}
}

// DeadLetters returns the number of dead letters so far.
func (s *System) DeadLetters() uint64 { return s.deadLetters.count.Load() }

// DeadLetter records msg, meant for pid, as undeliverable, exactly like the
// runtime does for its own dead letters: counted (fraktor.deadletters),
// published as *DeadLetterEvent, logged at most once per interval, and, when
// the sender is a local future, that future fails at once (with reason, or
// ErrDeadLetter when reason is nil). It is for extensions that deliver
// messages themselves (the remote transport). A sender PID that names a local
// process is resolved first, so a PID rebuilt from the wire finds its future.
// Safe for concurrent use; it never blocks.
func (s *System) DeadLetter(pid *PID, msg any, sender *PID, reason error) {
	if sender != nil && sender.cached() == nil && (sender.Address == s.Address() || sender.Address == LocalAddress) {
		if p, ok := s.registry.get(sender.ID); ok {
			sender.cache(p)
		}
	}
	s.deadLetter(pid, msg, sender, reason)
}
