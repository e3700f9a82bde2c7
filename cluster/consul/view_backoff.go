package consul

// viewBackoff counts the view query's failures for the watcher's backoff
// (the attempt number given to backoff.Jittered).
//
// Only a blocking query's success ends the backoff: a plain query (index 0,
// sent after a failure) that passes does not show that the next blocking one
// will, and a proxy that cuts long requests would otherwise make the view go
// stale and back every BackoffBase (TestConsulBlockingQueriesFailingBackOff).
// But a plain query that passes does show that the agent answers again, so
// the failures of plain queries before it (an outage: the agent down, paused
// or unreachable) no longer count; what stays counted is the failures of
// blocking queries since the last blocking success. Without that, the first
// transient failure after a long outage waited up to BackoffMax
// (TestConsulTransientFailureAfterOutageRetriesSoon).
type viewBackoff struct {
	failures int // the backoff attempt of the last failure
	blocking int // blocking queries failed since the last blocking success
}

// failed records a failed query and returns the backoff attempt (≥ 1).
func (b *viewBackoff) failed(blocking bool) int {
	b.failures++
	if blocking {
		b.blocking++
	}
	return b.failures
}

// succeeded records a query that passed.
func (b *viewBackoff) succeeded(blocking bool) {
	if blocking {
		*b = viewBackoff{}
		return
	}
	b.failures = b.blocking
}
