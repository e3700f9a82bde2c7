package extension

import "fmt"

// State is the lifecycle state of one extension (B1.5).
//
//	Installing → Ready                 (Install succeeded; not a Starter)
//	Installing → Starting → Ready      (Starter: Install, then Start)
//	Installing|Starting → Failed       (Install or Start failed)
//	Ready|Starting → Stopped           (ShutdownAll, or rollback after a failure)
//	Disabled                           (Enabled() == false; final)
//
// An installer whose config or requirements are invalid goes straight to
// Failed without being installed.
type State uint8

const (
	// Installing: Install is running.
	Installing State = iota + 1
	// Starting: Install returned; the extension waits for, or runs, Start.
	Starting
	// Ready: the extension is installed (and started) and can be looked up.
	Ready
	// Failed: validation, a requirement, Install or Start failed; see Cause.
	Failed
	// Disabled: the installer is disabled; nothing was created.
	Disabled
	// Stopped: the extension has been shut down; Cause holds a Shutdown error.
	Stopped
)

func (s State) String() string {
	switch s {
	case Installing:
		return "Installing"
	case Starting:
		return "Starting"
	case Ready:
		return "Ready"
	case Failed:
		return "Failed"
	case Disabled:
		return "Disabled"
	case Stopped:
		return "Stopped"
	}
	return fmt.Sprintf("State(%d)", uint8(s))
}

// Status is the state of one extension and, for Failed (and a Stopped whose
// Shutdown returned an error), the cause.
type Status struct {
	State State
	Cause error
}

func (s Status) String() string {
	if s.Cause != nil {
		return s.State.String() + ": " + s.Cause.Error()
	}
	return s.State.String()
}
