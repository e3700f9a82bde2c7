package cluster

import "github.com/fraktor-go/fraktor/actor"

// Internals the external tests (package cluster_test) look at.

// BlockedKeyCount returns how many member keys c's caller side leaves out
// of owner selection (Cluster.blocked).
func BlockedKeyCount(c *Cluster) int {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	return len(c.blocked)
}

// ErrFenced is the cause of refusals and dead letters on a member past its
// fence time.
var ErrFenced = errFenced

// OnFlightWait makes c call f each time a resolution of c begins to wait
// for one under way that it does not lead (flightGroup.waiting). Set it
// before c resolves anything.
func OnFlightWait(c *Cluster, f func(Identity)) { c.flights.waiting = f }

// MarkGone tells c's resolution of id under way, if any, that the
// activation pid ended (the ActivationTerminated broadcast's effect).
func MarkGone(c *Cluster, id Identity, pid *actor.PID) { c.flights.terminated(id, pid.Address, pid.ID) }
