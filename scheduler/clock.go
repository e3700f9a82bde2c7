package scheduler

import (
	"container/heap"
	"sync"
	"time"
)

// Clock is the time source of an executor: resume timers, backoff and
// receive timeouts all go through it, so a test can replace it with a
// ManualClock.
//
// AfterFunc calls f once, on a goroutine of the clock's choosing, after d has
// passed; f must not block. The returned stop function cancels the call and
// reports whether it did (false when f already ran or is running).
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

// SystemClock is the wall clock; its timers are the Go runtime's timers, so a
// pending timer costs no goroutine.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// AfterFunc implements Clock.
func (SystemClock) AfterFunc(d time.Duration, f func()) func() bool {
	return time.AfterFunc(d, f).Stop
}

// ManualClock is a virtual clock: time moves only when Advance is called, and
// due timers fire synchronously inside Advance, in deadline order (ties in
// the order they were set). It is safe for concurrent use.
type ManualClock struct {
	mu  sync.Mutex
	now time.Time
	seq uint64
	due timerHeap
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock { return &ManualClock{now: start} }

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc implements Clock. A d ≤ 0 fires at the next Advance (even Advance(0)).
func (c *ManualClock) AfterFunc(d time.Duration, f func()) func() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	t := &manualTimer{at: c.now.Add(max(d, 0)), seq: c.seq, f: f, index: -1}
	heap.Push(&c.due, t)
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		if t.index < 0 {
			return false
		}
		heap.Remove(&c.due, t.index)
		return true
	}
}

// Advance moves the clock forward by d and fires every timer that is due, in
// order; timers set by a firing callback fire too when they fall due within
// the same advance. It returns the number of callbacks run. The clock never
// goes back: a negative d counts as 0, and an Advance that a callback (or
// another goroutine) made during this one is not undone when this one ends
// (TestManualClockNeverGoesBack).
func (c *ManualClock) Advance(d time.Duration) int {
	c.mu.Lock()
	target := c.now.Add(max(d, 0))
	c.mu.Unlock()
	n := 0
	for {
		c.mu.Lock()
		if len(c.due) == 0 || c.due[0].at.After(target) {
			if target.After(c.now) {
				c.now = target
			}
			c.mu.Unlock()
			return n
		}
		t := heap.Pop(&c.due).(*manualTimer)
		if t.at.After(c.now) {
			c.now = t.at
		}
		c.mu.Unlock()
		t.f()
		n++
	}
}

// Pending returns the number of timers not yet fired.
func (c *ManualClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.due)
}

// NextDeadline returns the earliest pending deadline.
func (c *ManualClock) NextDeadline() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.due) == 0 {
		return time.Time{}, false
	}
	return c.due[0].at, true
}

type manualTimer struct {
	at    time.Time
	seq   uint64
	f     func()
	index int
}

type timerHeap []*manualTimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].at.Equal(h[j].at) {
		return h[i].seq < h[j].seq
	}
	return h[i].at.Before(h[j].at)
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i]; h[i].index = i; h[j].index = j }
func (h *timerHeap) Push(x any) {
	t := x.(*manualTimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}
