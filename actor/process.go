package actor

// Process is anything a PID can resolve to: a local actor, a future, a remote
// proxy, the dead-letter process. Implementations must be safe for concurrent
// use and must not block.
//
// SendUser delivers a user message (sender may be nil); SendSystem delivers a
// system message; StopProcess stops the process at once. When the runtime
// delivers to a custom process (a send, a stop, a watch, a future piped to
// it), a panic in SendUser or SendSystem makes the message a dead letter
// whose reason wraps the *PanicError, on the goroutine that delivered it.
type Process interface {
	SendUser(pid *PID, msg any, sender *PID)
	SendSystem(pid *PID, msg SystemMessage)
	StopProcess(pid *PID)
}

// SystemMessage marks messages of the runtime's own protocol (stop, watch,
// supervision). They overtake user messages in a mailbox.
type SystemMessage interface{ systemMessage() }
