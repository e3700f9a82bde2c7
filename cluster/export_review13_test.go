package cluster

import "time"

// Review13LinkDownFor returns how long c's reachability vote counts the
// link to address as down (linkFailures.downFor), false when not down.
func Review13LinkDownFor(c *Cluster, address string) (time.Duration, bool) {
	return c.links.downFor(address, c.now(), time.Time{})
}

// Review13Suspended reports whether the vote keeps address out on c.
func Review13Suspended(c *Cluster, address string) bool { return c.isSuspended(address) }
