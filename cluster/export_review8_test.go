package cluster

// Internals review8's external tests look at.

// HoldJoinMu locks c's joinMu (adoptRejoined and Shutdown take it) and
// returns its unlock.
func HoldJoinMu(c *Cluster) func() {
	c.joinMu.Lock()
	return c.joinMu.Unlock
}

// RemoteGone reports whether c saw its remote node end (watchRemote).
func RemoteGone(c *Cluster) bool { return c.remoteGone.Load() }
