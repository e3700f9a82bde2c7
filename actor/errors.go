package actor

import (
	"errors"
	"fmt"
	"reflect"
)

var (
	// ErrTimeout: a request or future got no answer in time.
	ErrTimeout = errors.New("actor: timeout")
	// ErrDeadLetter: the target of a request does not exist (any more).
	ErrDeadLetter = errors.New("actor: dead letter")
	// ErrNameExists: SpawnNamed found the name taken.
	ErrNameExists = errors.New("actor: name already exists")
	// ErrSystemStopped: the system has shut down.
	ErrSystemStopped = errors.New("actor: system stopped")
	// ErrMailboxFull: a bounded mailbox left a message out (any overflow
	// policy: the refused message under Reject, the dropped one under
	// DropNewest or DropOldest); a request whose message it was fails with it.
	ErrMailboxFull = errors.New("actor: mailbox full")
	// ErrInvalidConfig: SystemConfig.Validate failed.
	ErrInvalidConfig = errors.New("actor: invalid config")
	// ErrNilPID: a nil PID was given where a target is required.
	ErrNilPID = errors.New("actor: nil PID")
	// ErrNilProps: a spawn was given nil Props.
	ErrNilProps = errors.New("actor: nil props")
	// ErrNoActor: the Props made no actor instance (the producer returned
	// nil, or the Props have neither a producer nor a function). It is
	// the actor's failure on its first turn, handled by its supervisor
	// like a panic; a restart asks the Props again.
	ErrNoActor = errors.New("actor: the Props made no actor")
	// ErrInvalidProcess: RegisterProcess was given no process, one whose
	// dynamic type is not comparable, or an empty ID.
	ErrInvalidProcess = errors.New("actor: invalid process")
	// ErrFutureStopped: the future's process was stopped before it completed.
	ErrFutureStopped = errors.New("actor: future stopped")
	// ErrParentStopping: the parent of a spawn is stopping (or restarting)
	// and has already stopped its children; a child added now would outlive
	// it. A spawn under a guardian while the system shuts down returns
	// ErrSystemStopped instead.
	ErrParentStopping = errors.New("actor: parent is stopping")
	// ErrInvalidName: a name given to an actor under a guardian (a root
	// context's or SpawnSystem's) begins with '#', the prefix of the IDs of
	// other actors' children ("#<parent>/<name>"), whose IDs it could take,
	// or with "future$", the prefix of futures' IDs (IsFutureID); or a
	// generated name's prefix would make one of a future's form.
	ErrInvalidName = errors.New("actor: invalid name")
	// ErrNoRemote: a message or request went to a PID of another address
	// (not this system's, not LocalAddress) in a system without a remote
	// extension: nothing can carry it there. The dead letter's reason, and
	// a request's error, wrap it and ErrDeadLetter.
	ErrNoRemote = errors.New("actor: no remote extension installed for another address")
)

// TypeMismatchError is returned by Request when the reply is not of the
// requested type. It carries the reply.
type TypeMismatchError struct {
	Want reflect.Type
	Got  any
}

func (e *TypeMismatchError) Error() string {
	return fmt.Sprintf("actor: reply type mismatch: want %v, got %T (%v)", e.Want, e.Got, e.Got)
}

// PanicError wraps a value recovered from a panic in an actor's Receive.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("actor: panic in Receive: %v", e.Value) }

// Unwrap returns the panic value when it is an error.
func (e *PanicError) Unwrap() error {
	if err, ok := e.Value.(error); ok {
		return err
	}
	return nil
}
