package cluster

// Review14Suspended reports whether the reachability vote keeps address
// out of owner selection on c.
func Review14Suspended(c *Cluster, address string) bool { return c.isSuspended(address) }

// Review14Blocked reports whether the member with key is out of owner
// selection on c's caller side (blocked by hand or suspended by the vote).
func Review14Blocked(c *Cluster, key string) bool { return c.isBlockedMember(key) }
