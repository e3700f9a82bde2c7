package actor

// Process is anything a PID can resolve to: a local actor, a future, a remote
// proxy, the dead-letter process. Implementations must be safe for concurrent
// use and must not block.
//
// SendUser delivers a user message (sender may be nil); SendSystem delivers a
// system message; StopProcess stops the process at once.
type Process interface {
	SendUser(pid *PID, msg any, sender *PID)
	SendSystem(pid *PID, msg SystemMessage)
	StopProcess(pid *PID)
}

// SystemMessage marks messages of the runtime's own protocol (stop, watch,
// supervision). They overtake user messages in a mailbox.
type SystemMessage interface{ systemMessage() }

// ProcessStopped reports whether p is a local process that takes no more
// messages: an actor that has stopped (or is stopping for good), or a future
// that has completed. Other processes report false. A cache of processes
// looked up by ID uses it to notice that an ID it resolved is gone, and
// looks the ID up again (a name may since belong to a new actor).
func ProcessStopped(p Process) bool {
	switch p := p.(type) {
	case *cell:
		return p.mb.Closed()
	case *Future:
		return p.state.Load() != 0
	}
	return false
}
