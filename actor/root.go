package actor

import "time"

// RootContext sends, requests and spawns from outside any actor. Actors it
// spawns are children of the user guardian. It is safe for concurrent use.
type RootContext struct {
	sys *System
}

// System returns the actor system.
func (r *RootContext) System() *System { return r.sys }

// Send delivers msg to pid with no sender.
func (r *RootContext) Send(pid *PID, msg any) {
	r.sys.releaseDeferred(nil)
	r.sys.send(nil, pid, msg, nil)
}

// SendWithSender delivers msg to pid with the given sender.
func (r *RootContext) SendWithSender(pid *PID, msg any, sender *PID) {
	r.sys.releaseDeferred(nil)
	r.sys.send(nil, pid, msg, sender)
}

// RequestFuture delivers msg to pid with a future as the sender; the future
// fails with ErrTimeout after timeout (never, when timeout ≤ 0), or with
// ErrSystemStopped when the system shuts down before either. When the
// worker pools are idle, the target's turn may wait (at most 100 µs) for
// the caller's Result, Wait or ResultContext, which then run it on the
// calling goroutine (docs/actors.md, "Requests from outside"). A nil pid fails the future
// with ErrNilPID.
func (r *RootContext) RequestFuture(pid *PID, msg any, timeout time.Duration) *Future {
	f := r.sys.newFuture(pid, timeout)
	r.sys.sendDeferred(f, f, pid, msg)
	return f
}

// Spawn starts a top-level actor with a generated name. When the worker
// pools are idle, its Started may wait (at most 100 µs) for the caller's
// next operation: a StopFuture(pid).Wait() or Request to it runs the turn
// on the calling goroutine, anything else hands it to the pool
// (docs/actors.md, "Requests from outside"). It returns nil, and nothing
// is spawned, when the spawn fails (nil Props, ErrNilProps; the system
// stopped; a SpawnMiddleware refused it or panicked): SpawnNamed with name
// "" is the same spawn with its error.
func (r *RootContext) Spawn(props *Props) *PID {
	return pidOrNil(r.sys.spawnFromRoot(props, "", ""))
}

// SpawnPrefix starts a top-level actor whose generated name starts with
// prefix. A prefix that would make the name of a future's form (IsFutureID:
// "future", "future$...") is refused: nil, nothing spawned.
func (r *RootContext) SpawnPrefix(props *Props, prefix string) *PID {
	return pidOrNil(r.sys.spawnFromRoot(props, "", prefix))
}

// SpawnNamed starts a top-level actor named name ("" generates one);
// ErrNameExists if taken, ErrNilProps for nil Props, ErrInvalidName,
// ErrSystemStopped after Shutdown, or a SpawnMiddleware's error.
func (r *RootContext) SpawnNamed(props *Props, name string) (*PID, error) {
	return r.sys.spawnFromRoot(props, name, "")
}

// Stop stops pid after the message it is handling.
func (r *RootContext) Stop(pid *PID) {
	r.sys.releaseDeferred(nil)
	r.sys.sendSystem(nil, pid, stopSys)
}

// Poison stops pid after the messages already in its mailbox.
func (r *RootContext) Poison(pid *PID) {
	r.sys.releaseDeferred(nil)
	r.sys.send(nil, pid, &PoisonPill{}, nil)
}

// StopFuture stops pid and returns a future completed when it has stopped.
// Like RequestFuture, with the pools idle the stop may wait for the
// caller's Wait or Result, which then run it on the calling goroutine. A
// nil pid fails the future with ErrNilPID.
func (r *RootContext) StopFuture(pid *PID) *Future { return r.sys.stopFuture(pid) }

// PoisonFuture poisons pid and returns a future completed when it has
// stopped; a nil pid fails it with ErrNilPID. The pill is a user message:
// a full bounded mailbox that refuses or drops it fails the future with
// ErrMailboxFull (for an actor on another node, an ErrDeadLetter that
// wraps it, when that node says why), and the actor goes on.
func (r *RootContext) PoisonFuture(pid *PID) *Future {
	if pid == nil {
		return r.sys.failedFuture(ErrNilPID)
	}
	r.sys.releaseDeferred(nil)
	f := r.sys.newFuture(nil, 0)
	r.sys.sendSystem(nil, pid, &Watch{Watcher: &f.pidv})
	// The Watch answers when the actor stops; the pill's sender is the
	// future, so that a bounded mailbox that refuses or drops the pill
	// (a dead letter with ErrMailboxFull) fails it, where before nothing
	// answered it and its Wait waited for ever
	// (TestPoisonFutureFullMailboxFails). A remote actor's pill carries it
	// too: the remote node's mailbox refusal then answers the future with
	// a DeadLetterResponse (TestRemotePoisonFutureFullMailboxFails in
	// remote), where before the future waited for ever. Not a missing
	// local process's: its Watch has answered already.
	var sender *PID
	p := r.sys.resolve(pid)
	if _, local := p.(*cell); local || (p != r.sys.deadLetters && pid.Address != LocalAddress && pid.Address != r.sys.Address()) {
		sender = &f.pidv
	}
	r.sys.send(nil, pid, &PoisonPill{}, sender)
	return f
}
