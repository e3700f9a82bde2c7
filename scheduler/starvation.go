package scheduler

import "time"

// DefaultStarvedAfter is what a zero Config.StarvedAfter means.
const DefaultStarvedAfter = time.Second

// MinStarvedAfter floors Config.StarvedAfter: a watch that looked every
// nanosecond would take the pool's lock and set a timer without pause, and
// report every take as an episode's end.
const MinStarvedAfter = 10 * time.Millisecond

// Starved describes a pool whose ready queue stood still: runnables waited
// in it for at least For while no worker took any, every worker staying
// in an invocation (blocked on a channel, I/O, a request, or busy for that
// long). Config.OnStarved receives it once per episode.
type Starved struct {
	Pool    string        // Config.Name
	Workers int           // the pool's size
	Waiting int           // runnables in the ready queue when it was seen
	For     time.Duration // how long the queue has not moved, at least
}

// The starvation watch. A fixed pool has a failure mode that a goroutine
// per actor has not: as many invocations that block as workers stop every
// other actor of the pool, and what the actors then see is timeouts with
// no cause named (on 2026-11-25, 200 grains calling other grains with
// blocking requests on 2 workers: every request failed after its
// timeout). The watch names it. It costs no timer while the pool keeps up:
// it is armed by a Schedule that finds no parked worker to wake (the
// queue is growing with every worker busy) and by Release, and disarms
// once the queue is empty. Armed, it looks every StarvedAfter: when
// workers are parked while runnables wait for nobody woken (what Release
// leaves when its invocation then blocks on a channel instead of a
// future), it wakes one; else, when no worker has taken from the queue
// or started a runnable of its local batch since the last look and the
// queue is not empty, the pool is starved; the next take or start ends
// the episode. The count of takes is a field under the lock that take
// already holds; each worker counts the runnables it starts from its
// local batch (an atomic add on a line of its own worker, not on the
// run-next hop).

// armStarvedLocked arms the watch unless it is armed, off, or the pool is
// shutting down; the caller holds mu and, when it reports true, calls
// startStarvedWatch after unlocking.
func (c *Coordinator) armStarvedLocked() bool {
	if c.cfg.OnStarved == nil || c.watching || c.closed {
		return false
	}
	c.watching = true
	c.watchProgress = c.progressLocked()
	return true
}

func (c *Coordinator) startStarvedWatch() {
	c.timers.After(c.cfg.Clock, c.cfg.StarvedAfter, c.checkStarvedF)
}

// progressLocked is what the watch compares between two looks: the
// runnables taken from the queue, and those the workers started from
// their local batches (a saturated pool working through its batches is
// not starved: TestReview11NoStarvationWhileAWorkerRunsItsLocalBatch).
// The caller holds mu.
func (c *Coordinator) progressLocked() uint64 {
	p := c.taken
	for _, w := range c.workers {
		p += w.batchRan.Load()
	}
	return p
}

// checkStarved is the watch's timer.
func (c *Coordinator) checkStarved() {
	c.mu.Lock()
	if c.closed || c.queue.len() == 0 {
		c.watching, c.starvedFor, c.reported = false, 0, false
		c.mu.Unlock()
		return
	}
	var report Starved
	fire := false
	wake := c.idleForQueuedLocked()
	if wake != nil {
		// Not starved: runnables wait while workers are parked and none
		// was woken for them. Release hands work over without a wake, for
		// the waiter to call WakeIdle; one that blocks some other way (a
		// channel) left it there. Wake one now, a StarvedAfter late
		// (TestCoordinatorWatchWakesForReleasedWork).
		c.watchProgress, c.starvedFor, c.reported = c.progressLocked(), 0, false
	} else if p := c.progressLocked(); p == c.watchProgress {
		c.starvedFor += c.cfg.StarvedAfter
		if !c.reported {
			c.reported, fire = true, true
			report = Starved{Pool: c.cfg.Name, Workers: len(c.workers), Waiting: c.queue.len(), For: c.starvedFor}
		}
	} else {
		c.watchProgress, c.starvedFor, c.reported = p, 0, false
	}
	c.mu.Unlock()
	if wake != nil {
		wake.wake <- struct{}{}
	}
	if fire {
		c.cfg.OnStarved(report)
	}
	c.startStarvedWatch()
}
