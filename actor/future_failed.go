package actor

// FailedFuture returns a future that has failed with err and belongs to no
// system: for an API that must return a future where no system is at hand
// to make one with (the future methods of a nil *cluster.Cluster, which
// Get returns when no cluster is installed). Result, Wait and
// ResultContext return err at once, Done is closed, Complete does nothing.
// PipeTo delivers err through the system of each local actor whose PID
// this process has resolved (an actor's Self, a PID Spawn returned), and
// a Context's ReenterAfter on it runs its callback with err; any other PID
// has no system to route it, or to dead-letter it, so err is dropped
// there.
func FailedFuture(err error) *Future {
	f := &Future{result: nil, err: err, set: true}
	f.state.Store(1)
	return f
}

// pipeNoSystem is pipe for a FailedFuture.
func (f *Future) pipeNoSystem(v any, pids []*PID) {
	for _, p := range pids {
		if p == nil {
			continue
		}
		if c := p.local.Load(); c != nil {
			c.sys.send(nil, p, v, nil)
			continue
		}
		if k, ok := p.cached().(*continuation); ok {
			// A ReenterAfter on it: the continuation's PID is bound to it
			// and not registered, and its owner has the system. Before,
			// the callback never ran (a typed grain that deferred its
			// reply on a nil cluster's CallFuture: its caller timed out;
			// TestReenterAfterFailedFutureRunsTheCallback).
			k.SendUser(nil, v, nil)
		}
	}
}
