package actor

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"
)

// DeadLetterEvent is published on the EventStream for every message that
// could not be delivered. Reason is nil when no process took it: a target
// that does not exist, one that has stopped (what was queued at its stop,
// and what came after while no new actor had its name: see cell.rebind),
// or a Respond without a sender (PID nil); else it says why (for example
// ErrMailboxFull, ErrNoRemote).
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
	sys        *System
	count      atomic.Uint64
	suppressed atomic.Uint64
	every      time.Duration
	nextLog    atomic.Int64 // system-clock Unix nanoseconds before which nothing is logged
}

func newDeadLetters(s *System, every time.Duration) *deadLetters {
	if every <= 0 {
		every = time.Second
	}
	return &deadLetters{sys: s, every: every}
}

// allowLog reports whether a dead letter may be logged now: at most one per
// interval, on the system clock.
func (d *deadLetters) allowLog() bool {
	now := d.sys.clock.Now().UnixNano()
	next := d.nextLog.Load()
	return now >= next && d.nextLog.CompareAndSwap(next, now+int64(d.every))
}

func (d *deadLetters) SendUser(pid *PID, msg any, sender *PID) {
	d.sys.deadLetter(pid, msg, sender, d.sys.unroutable(pid))
}

// unroutable is the reason of a dead letter to pid that no process can
// take because pid is another address's and no remote extension is
// installed: ErrNoRemote, with ErrDeadLetter (what a request to it fails
// with, as before). Before, it was a dead letter without a reason,
// as if the actor did not exist there (TestNoRemoteDeadLetterSaysWhy).
func (s *System) unroutable(pid *PID) error {
	if pid == nil || pid.Address == LocalAddress || pid.Address == s.Address() || s.remote.Load() != nil {
		return nil
	}
	return fmt.Errorf("%w: %s: %w (this system is %s)", ErrDeadLetter, pid, ErrNoRemote, s.Address())
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
	if reason == nil && s.redirected(pid, msg, sender) {
		return
	}
	msg, _ = UnwrapEnvelope(msg)
	d := s.deadLetters
	d.count.Add(1)
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
			// waiting future, so that the request fails at once there too
			// (with the reason, where the wire can carry it).
			s.send(nil, sender, &DeadLetterResponse{Target: pid, Reason: reason}, nil)
		}
	}
	if _, loop := msg.(*DeadLetterEvent); !loop && s.events.Len() > 0 {
		// Not for a dead letter that is itself a DeadLetterEvent: a
		// subscriber that forwards dead letters to an actor that is gone
		// would get its own forward back, and forward it again, for ever
		// (newuser8: 1.1 M dead letters in 200 ms;
		// TestForwardedDeadLetterEventDoesNotLoop). It is still counted
		// and logged.
		s.events.Publish(&DeadLetterEvent{PID: pid, Message: msg, Sender: sender, Reason: reason})
	}
	if d.allowLog() {
		s.logger.Info("dead letter", "pid", pid.String(), "type", typeName(msg), "reason", reason, "suppressed", d.suppressed.Swap(0))
	} else {
		d.suppressed.Add(1)
	}
}

// redirected offers msg, for pid, to the Redirect installed for the parent
// of pid when pid is a local process (Host.SetRedirect), and reports
// whether it took msg. A child's ID is its parent's prefix and its name
// (childPrefix); a grandchild's begins with its own parent's prefix, so it
// matches no other actor's.
func (s *System) redirected(pid *PID, msg any, sender *PID) bool {
	rs := s.redirects.Load()
	if rs == nil || pid == nil || (pid.Address != s.Address() && pid.Address != LocalAddress) {
		return false
	}
	for _, x := range *rs {
		if name, ok := strings.CutPrefix(pid.ID, x.prefix); ok {
			return s.offerRedirect(x.r, pid, name, msg, sender)
		}
	}
	return false
}

// offerRedirect calls r, an extension's code, on whatever goroutine found
// the target missing: a sender's, a connection's reader, or a worker in
// the middle of a stop (the drain of the stopped child's mailbox). A panic
// in it is logged and the message is a dead letter, as if r had refused
// it; before, it went up that goroutine, and a stop it broke off never
// told the parent, whose own stop then waited for good
// (TestRedirectPanicIsDeadLetter).
func (s *System) offerRedirect(r Redirect, pid *PID, name string, msg any, sender *PID) (took bool) {
	defer func() {
		if v := recover(); v != nil {
			took = false
			s.logger.Warn("redirect panicked; message is a dead letter", "pid", pid.String(), "panic", v)
		}
	}()
	return r(pid, name, msg, sender)
}

// DeadLetters returns the number of dead letters so far.
func (s *System) DeadLetters() uint64 { return s.deadLetters.count.Load() }
