package testkit

import (
	"math"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// driftClock is one member slot's clock (TestCluster.SetClockRate): the
// cluster's clock (the true one: system or virtual) run at a rate. From
// the moment a rate is set, Now advances rate times as fast as the true
// clock, and a timer of d fires after d/rate of true time, so that it
// fires when Now has moved by d. Its times stay continuous across rate
// changes: a change starts a new segment at the current local time, and
// re-arms the pending timers so that each still fires when Now reaches
// its deadline (as a slewed clock's timers do).
//
// It belongs to the slot, not to one process: a restarted member keeps
// it (its rate and the offset it built up), as a machine's oscillator
// outlives the process. The registry, the fault network, the Observer and
// the FencedStore keep the true clock.
type driftClock struct {
	src scheduler.Clock

	mu     sync.Mutex
	segs   []driftSeg // oldest first, never empty
	timers map[*driftTimer]struct{}
}

// driftSeg: from true time at on, the local time is local + (t − at)·rate.
type driftSeg struct {
	at, local time.Time
	rate      float64
}

// driftTimer is a pending timer of a driftClock: due in local time; stop
// cancels the true clock's timer it is armed with now. Its fields are
// guarded by c.mu.
type driftTimer struct {
	c    *driftClock
	due  time.Time
	f    func()
	stop func() bool
	done bool
}

var _ scheduler.Clock = (*driftClock)(nil)

func newDriftClock(src scheduler.Clock) *driftClock {
	now := src.Now()
	return &driftClock{src: src, segs: []driftSeg{{at: now, local: now, rate: 1}}, timers: map[*driftTimer]struct{}{}}
}

// Now implements scheduler.Clock: the local time.
func (c *driftClock) Now() time.Time { return c.localAt(c.src.Now()) }

// AfterFunc implements scheduler.Clock: f runs after d of local time,
// d/rate of true time at the current rate.
func (c *driftClock) AfterFunc(d time.Duration, f func()) func() bool {
	d = max(d, 0)
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &driftTimer{c: c, due: c.localAtLocked(c.src.Now()).Add(d), f: f}
	c.timers[t] = struct{}{}
	t.stop = c.src.AfterFunc(trueDuration(d, c.segs[len(c.segs)-1].rate), t.fire)
	return t.cancel
}

// trueDuration is how long d of local time takes on the true clock at rate.
func trueDuration(d time.Duration, rate float64) time.Duration {
	if rate == 1 || d <= 0 {
		return d
	}
	return time.Duration(math.Ceil(float64(d) / rate))
}

func (t *driftTimer) fire() {
	t.c.mu.Lock()
	if t.done {
		t.c.mu.Unlock()
		return
	}
	t.done = true
	delete(t.c.timers, t)
	t.c.mu.Unlock()
	t.f()
}

func (t *driftTimer) cancel() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	delete(t.c.timers, t)
	t.stop()
	return true
}

// rate returns the current rate.
func (c *driftClock) rate() float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.segs[len(c.segs)-1].rate
}

// identity reports whether the clock has never run at a rate other than 1
// (its local time is the true time).
func (c *driftClock) identity() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.segs) == 1 && c.segs[0].rate == 1
}

// localAt returns the local time at true time t (t may be in the past: the
// segment it fell in counts).
func (c *driftClock) localAt(t time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.localAtLocked(t)
}

func (c *driftClock) localAtLocked(t time.Time) time.Time {
	if len(c.segs) == 1 && c.segs[0].rate == 1 {
		return t
	}
	k := len(c.segs) - 1
	for k > 0 && t.Before(c.segs[k].at) {
		k--
	}
	s := c.segs[k]
	return s.local.Add(scaleDuration(t.Sub(s.at), s.rate))
}

// trueAt returns the true time at which the local time was local: the
// inverse of localAt (a local time before the clock was made maps at rate
// 1).
func (c *driftClock) trueAt(local time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.segs) == 1 && c.segs[0].rate == 1 {
		return local
	}
	k := len(c.segs) - 1
	for k > 0 && local.Before(c.segs[k].local) {
		k--
	}
	s := c.segs[k]
	if k == 0 && local.Before(s.local) {
		return s.at.Add(local.Sub(s.local))
	}
	return s.at.Add(scaleDuration(local.Sub(s.local), 1/s.rate))
}

// setRate makes the clock run at rate from now on, and re-arms each
// pending timer for its local deadline at the new rate (one whose true
// timer is firing now is left to fire).
func (c *driftClock) setRate(rate float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.segs[len(c.segs)-1].rate == rate {
		return
	}
	now := c.src.Now()
	local := c.localAtLocked(now)
	c.segs = append(c.segs, driftSeg{at: now, local: local, rate: rate})
	for t := range c.timers {
		if t.stop() {
			t.stop = c.src.AfterFunc(trueDuration(t.due.Sub(local), rate), t.fire)
		}
	}
}

func scaleDuration(d time.Duration, rate float64) time.Duration {
	if rate == 1 {
		return d
	}
	return time.Duration(math.Round(float64(d) * rate))
}
