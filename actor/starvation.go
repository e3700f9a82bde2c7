package actor

import (
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// PoolStarved is published on the EventStream, and logged at Warn, when a
// worker pool's ready queue stood still for SystemConfig.StarvationWarning
// while actors waited in it: every worker of the pool stayed in one
// invocation all that time (a Receive blocked on a channel, I/O, a lock
// or a blocking request, or busy computing). On a fixed pool, as many
// blocked invocations as workers stop every other actor of the pool, and
// what the other actors' callers see is timeouts with no cause named;
// this names it. It comes once per episode: the next time a worker takes
// from the queue the episode ends. Actors whose Receive blocks belong on
// the blocking pool (WithBlocking), or should not block (ReenterAfter,
// PipeTo).
type PoolStarved struct {
	Pool    string        // the pool's name: the system's, or "<name>-blocking"
	Workers int           // the pool's size
	Waiting int           // actors waiting in the ready queue when it was seen
	For     time.Duration // how long the queue had not moved, at least
}

// starvedHook returns the scheduler's starvation callback for the pools of
// s, or nil when the watch is off: a negative StarvationWarning, or a zero
// one on a clock that is not the system's. The watch measures the time
// workers stay in invocations, which run in wall time: on a virtual clock
// (testkit's VirtualTime, tests that drive timers by hand) an Advance would
// find a pool starved that was busy for microseconds, and its timer would
// be one more on the test's clock (cluster's
// TestClusterLeaseEventsKeepOneTickTimer counts them;
// TestReview11StarvationWatchSetsNoTimerOnAVirtualClock). A positive
// StarvationWarning turns it on with any clock, as deferred turns are
// on with the system clock only (future_deferred.go).
func (s *System) starvedHook() func(scheduler.Starved) {
	if s.cfg.StarvationWarning < 0 || s.cfg.StarvationWarning == 0 && !s.realClock {
		return nil
	}
	return func(st scheduler.Starved) {
		hint := "a Receive that blocks holds its worker (run it WithBlocking, or use ReenterAfter/PipeTo: docs/actors.md)"
		if st.Pool == s.name+"-blocking" {
			hint = "every worker of the blocking pool is held by a Receive that blocks (raise SystemConfig.BlockingWorkers, or block less)"
		}
		s.logger.Warn("actor: worker pool starved: every worker stayed in one invocation while actors waited; "+hint,
			"pool", st.Pool, "workers", st.Workers, "waiting", st.Waiting, "for", st.For)
		s.events.Publish(&PoolStarved{Pool: st.Pool, Workers: st.Workers, Waiting: st.Waiting, For: st.For})
	}
}
