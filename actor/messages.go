package actor

import "time"

// Lifecycle messages delivered to Receive.
type (
	// Started is the first message an actor receives, and the first after a restart.
	Started struct{}
	// Stopping is delivered when the actor begins to stop, before its children stop.
	Stopping struct{}
	// Stopped is the last message an actor receives; its children have stopped.
	Stopped struct{}
	// Restarting is delivered to the failed instance before it is replaced.
	Restarting struct{}
	// ReceiveTimeout is delivered when no message arrived within the receive timeout.
	ReceiveTimeout struct{}
	// PoisonPill stops the receiver after the messages queued before it.
	PoisonPill struct{}
)

// TerminatedReason says why a watched process ended.
type TerminatedReason uint8

const (
	// TerminatedStopped: the actor stopped.
	TerminatedStopped TerminatedReason = iota
	// TerminatedNotFound: the watched PID did not exist.
	TerminatedNotFound
	// TerminatedAddressTerminated: the node hosting it became unreachable.
	TerminatedAddressTerminated
)

func (r TerminatedReason) String() string {
	switch r {
	case TerminatedStopped:
		return "Stopped"
	case TerminatedNotFound:
		return "NotFound"
	case TerminatedAddressTerminated:
		return "AddressTerminated"
	}
	return "Unknown"
}

// Terminated tells a watcher that Who has ended.
type Terminated struct {
	Who *PID
	Why TerminatedReason
}

// DeadLetterResponse is sent to a future whose request went to a dead
// letter. Reason is nil when Target does not exist, else why the message
// was not delivered (the future's error wraps it): from another node, that
// it could not decode the message (remote.ErrUnknownType, ...).
type DeadLetterResponse struct {
	Target *PID
	Reason error
}

// Shared instances: lifecycle messages carry no data, so delivering them
// allocates nothing.
var (
	startedMsg        = &Started{}
	stoppingMsg       = &Stopping{}
	stoppedMsg        = &Stopped{}
	restartingMsg     = &Restarting{}
	receiveTimeoutMsg = &ReceiveTimeout{}
)

// System messages: the runtime's own protocol, ahead of user messages.
type (
	// Watch asks the receiver to send Terminated to Watcher when it ends.
	Watch struct{ Watcher *PID }
	// Unwatch cancels a Watch.
	Unwatch struct{ Watcher *PID }
	// TerminatedSystem carries a Terminated to a watcher or parent.
	TerminatedSystem struct{ Terminated }
	// Stop stops the receiver at once (after the message being
	// processed) when it arrives as a system message: Context.Stop,
	// RootContext.Stop, StopFuture. Sent with Send it is a user message
	// like any other and reaches Receive; to stop an actor after the
	// messages already queued, Poison it (PoisonPill).
	Stop struct{}

	startMsg   struct{}
	failureMsg struct {
		child    *PID
		err      error
		message  any
		failures int
		retry    time.Duration
		stats    *RestartStats
	}
	resumeMsg  struct{}
	restartMsg struct{}
	timeoutMsg struct{ gen uint64 }
)

func (*Watch) systemMessage()            {}
func (*Unwatch) systemMessage()          {}
func (*TerminatedSystem) systemMessage() {}
func (*Stop) systemMessage()             {}
func (*startMsg) systemMessage()         {}
func (*failureMsg) systemMessage()       {}
func (*resumeMsg) systemMessage()        {}
func (*restartMsg) systemMessage()       {}

var (
	stopSys    = &Stop{}
	startSys   = &startMsg{}
	resumeSys  = &resumeMsg{}
	restartSys = &restartMsg{}
)
