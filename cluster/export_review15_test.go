package cluster

// Review15Lift runs the reachability vote's lift of m on c (vote, once it
// has found m's link up and the vote over and read remote's block list).
func Review15Lift(c *Cluster, m Member) bool { return c.lift(m) }
