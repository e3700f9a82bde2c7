package testkit

// IdleForTest reports whether settle would find the cluster idle now.
func (tc *TestCluster) IdleForTest() bool { return tc.idle() }

// SettlesForTest returns how many times the cluster settled after a move
// of its virtual clock, and how many of those waited all of settleWait.
func (tc *TestCluster) SettlesForTest() (settles, timeouts int) {
	return int(tc.settles.Load()), int(tc.settleTimeouts.Load())
}
