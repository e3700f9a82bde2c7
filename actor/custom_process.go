package actor

import (
	"fmt"
	"reflect"
)

// RegisterProcess registers p, a Process of the caller's own (a router, a
// collector of answers), under id in the system's registry and returns its
// PID: the PID carries p from birth, and any other PID with the system's
// Address and id (one rebuilt from the wire, NewPID) resolves to p. The ID
// space is shared with actors: a taken id fails with ErrNameExists, and an
// actor spawned later under a registered id fails the same way. It fails
// with ErrSystemStopped once Shutdown has begun.
//
// The caller owns the registration and ends it with UnregisterProcess; p
// must be safe for concurrent use and must not block (see Process), and its
// dynamic type comparable (a pointer, typically); a nil p, another type, an
// empty id or one of a future's form (IsFutureID) fails with
// ErrInvalidProcess.
func (s *System) RegisterProcess(id string, p Process) (*PID, error) {
	if p == nil {
		return nil, fmt.Errorf("%w: nil", ErrInvalidProcess)
	}
	if !reflect.TypeOf(p).Comparable() {
		// UnregisterProcess compares the registered process with the
		// PID's; a non-comparable dynamic type would panic there.
		return nil, fmt.Errorf("%w: type %T is not comparable (use a pointer)", ErrInvalidProcess, p)
	}
	if id == "" {
		return nil, fmt.Errorf("%w: empty ID", ErrInvalidProcess)
	}
	if IsFutureID(id) {
		// Futures' IDs: a reply remote cannot deliver is reported to such
		// an ID as to a waiting future (IsFutureID).
		return nil, fmt.Errorf("%w: %q begins with %q (futures' IDs do)", ErrInvalidProcess, id, futureIDPrefix)
	}
	if s.stopped.Load() {
		return nil, ErrSystemStopped
	}
	if !s.registry.add(id, p) {
		return nil, fmt.Errorf("%w: %q", ErrNameExists, id)
	}
	pid := &PID{Address: s.Address(), ID: id}
	pid.cache(p)
	return pid, nil
}

// UnregisterProcess ends a registration made by RegisterProcess, given the
// PID it returned: pid's ID no longer resolves. PIDs that resolved it
// before keep the process they cached, so the process itself must turn away
// what reaches it afterwards (DeadLetter). It removes only the process pid
// was registered with: an actor's PID, or a PID whose ID was registered
// again since, is left alone and false is returned.
func (s *System) UnregisterProcess(pid *PID) bool {
	if pid == nil {
		return false
	}
	p := pid.cached()
	if p == nil {
		return false
	}
	if _, isActor := p.(*cell); isActor {
		return false
	}
	return s.registry.removeIf(pid.ID, p)
}

// DeadLetter records msg, meant for pid, as undeliverable, as the runtime
// does for its own dead letters: counted, published as *DeadLetterEvent,
// logged at most once per interval, and, when sender is a local future,
// that future fails at once with reason (ErrDeadLetter when reason is nil).
// A custom Process calls it for a message it cannot deliver.
func (s *System) DeadLetter(pid *PID, msg any, sender *PID, reason error) {
	host{s}.DeadLetter(pid, msg, sender, reason)
}

// SendSystem delivers a system message to pid. A custom Process uses it to
// pass on what it receives (Stop) and to tell its watchers that it has
// ended (a *TerminatedSystem whose Who is its own PID). A nil message,
// also a nil pointer of a message type, is dropped: the runtime would read
// through it (a nil *Watch's watcher) on the sender's goroutine or on the
// target's turn (TestSendSystemNilWatch).
func (s *System) SendSystem(pid *PID, m SystemMessage) {
	if m == nil {
		return
	}
	if v := reflect.ValueOf(m); v.Kind() == reflect.Pointer && v.IsNil() {
		return
	}
	s.sendSystem(nil, pid, m)
}
