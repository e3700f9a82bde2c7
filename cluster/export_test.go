package cluster

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
