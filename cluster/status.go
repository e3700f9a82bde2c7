package cluster

import "fmt"

// Status is the readiness of the cluster runtime on this member (B1.5).
type Status int32

const (
	// StatusJoining: the runtime is joining the provider or waiting for its
	// first view; requests wait (within their deadline) and are retried.
	StatusJoining Status = iota + 1
	// StatusReady: the member has a view and a valid membership lease.
	StatusReady
	// StatusFenced: the membership lease was lost or revoked; the member
	// stopped its grains, refuses activations and rejoins with a new
	// incarnation when the provider is reachable again.
	StatusFenced
	// StatusLeaving: a graceful shutdown is in progress (ErrShuttingDown).
	StatusLeaving
	// StatusStopped: the runtime has shut down.
	StatusStopped
)

func (s Status) String() string {
	switch s {
	case StatusJoining:
		return "joining"
	case StatusReady:
		return "ready"
	case StatusFenced:
		return "fenced"
	case StatusLeaving:
		return "leaving"
	case StatusStopped:
		return "stopped"
	}
	return fmt.Sprintf("Status(%d)", int32(s))
}
