package testkit

import (
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// pauser stalls one member as a stop-the-world GC pause or SIGSTOP would:
// while paused, the runnables its dispatcher is given (actors with work) are
// held instead of run, and the timers of its clock that fire are held
// instead of called; Resume runs what was held. A batch already running on
// a worker finishes (at most Throughput messages). The member's network
// goroutines keep reading into mailboxes, as a kernel keeps receiving into
// socket buffers.
type pauser struct {
	inner scheduler.Dispatcher

	mu       sync.Mutex
	paused   bool
	held     []scheduler.Runnable
	heldFns  []func()
	clockSrc scheduler.Clock
}

var (
	_ scheduler.Dispatcher = (*pauser)(nil)
	_ scheduler.Clock      = pausedClock{}
)

// Schedule implements scheduler.Dispatcher.
func (p *pauser) Schedule(r scheduler.Runnable) {
	p.mu.Lock()
	if p.paused {
		p.held = append(p.held, r)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.inner.Schedule(r)
}

// ScheduleFrom implements scheduler.Dispatcher.
func (p *pauser) ScheduleFrom(w *scheduler.Worker, r scheduler.Runnable) {
	p.mu.Lock()
	if p.paused {
		p.held = append(p.held, r)
		p.mu.Unlock()
		return
	}
	p.mu.Unlock()
	p.inner.ScheduleFrom(w, r)
}

func (p *pauser) pause() {
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
}

func (p *pauser) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// resume runs the held timers, then hands the held runnables over.
func (p *pauser) resume() {
	p.mu.Lock()
	if !p.paused {
		p.mu.Unlock()
		return
	}
	p.paused = false
	fns, rs := p.heldFns, p.held
	p.heldFns, p.held = nil, nil
	p.mu.Unlock()
	for _, f := range fns {
		f()
	}
	for _, r := range rs {
		p.inner.Schedule(r)
	}
}

// clock returns the member's clock: the shared clock, whose timers are
// held while the member is paused.
func (p *pauser) clock() scheduler.Clock { return pausedClock{p} }

type pausedClock struct{ p *pauser }

func (c pausedClock) Now() time.Time { return c.p.clockSrc.Now() }

func (c pausedClock) AfterFunc(d time.Duration, f func()) func() bool {
	return c.p.clockSrc.AfterFunc(d, func() {
		c.p.mu.Lock()
		if c.p.paused {
			c.p.heldFns = append(c.p.heldFns, f)
			c.p.mu.Unlock()
			return
		}
		c.p.mu.Unlock()
		f()
	})
}
