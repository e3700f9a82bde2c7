package testkit

import (
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/scheduler"
)

// pauser stalls one member as a stop-the-world GC pause or SIGSTOP would:
// while paused, the runnables its dispatcher is given (actors with work) are
// held instead of run, a worker that comes to run one it was given before
// (a busy actor, which the worker pool runs again on its own without asking
// the dispatcher) waits, and the timers of its clock that fire are held
// instead of called; Resume runs what was held and lets the workers go on.
// A batch already running on a worker finishes (at most Throughput
// messages). The member's network goroutines keep reading into mailboxes,
// as a kernel keeps receiving into socket buffers.
type pauser struct {
	inner scheduler.Dispatcher

	mu       sync.Mutex
	paused   bool
	resumed  chan struct{} // while paused: closed by resume
	held     []scheduler.Runnable
	heldFns  []func()
	clockSrc scheduler.Clock
}

// pausable is a runnable handed to the worker pool: each batch waits while
// the member is paused.
type pausable struct {
	scheduler.Runnable
	p *pauser
}

func (r pausable) InvokeBatch(throughputHint int) scheduler.InvokeResult {
	r.p.await()
	return r.Runnable.InvokeBatch(throughputHint)
}

func (p *pauser) wrap(r scheduler.Runnable) scheduler.Runnable {
	if _, ok := r.(pausable); ok {
		return r
	}
	return pausable{Runnable: r, p: p}
}

// await returns when the member is not paused (again, when a new pause
// began while the last one ended).
func (p *pauser) await() {
	for {
		p.mu.Lock()
		ch := p.resumed
		p.mu.Unlock()
		if ch == nil {
			return
		}
		<-ch
	}
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
	p.inner.Schedule(p.wrap(r))
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
	p.inner.ScheduleFrom(w, p.wrap(r))
}

func (p *pauser) pause() {
	p.mu.Lock()
	if !p.paused {
		p.paused, p.resumed = true, make(chan struct{})
	}
	p.mu.Unlock()
}

func (p *pauser) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}

// resume runs the held timers, then hands the held runnables over and lets
// the waiting workers go on.
func (p *pauser) resume() {
	p.mu.Lock()
	if !p.paused {
		p.mu.Unlock()
		return
	}
	p.paused = false
	waiting := p.resumed
	fns, rs := p.heldFns, p.held
	p.heldFns, p.held = nil, nil
	p.mu.Unlock()
	for _, f := range fns {
		f()
	}
	for _, r := range rs {
		p.inner.Schedule(p.wrap(r))
	}
	// The waiting workers go on last, as the held runnables do.
	p.mu.Lock()
	if p.resumed == waiting {
		p.resumed = nil
	}
	p.mu.Unlock()
	close(waiting)
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
