package testkit

import (
	"fmt"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// DefaultTimeout is the wait of expectations called with timeout 0 on a
// real (multi-worker) system.
const DefaultTimeout = 3 * time.Second

// DefaultNoMsgWait is the wait of ExpectNoMsg and ExpectNoEvent called with
// d ≤ 0 on a real system.
const DefaultNoMsgWait = 100 * time.Millisecond

// inbox is the unbounded FIFO of what a probe received. It never drops:
// the producer appends under a mutex and the test takes from the front.
type inbox struct {
	mu    sync.Mutex
	items []Received
	wake  chan struct{} // capacity 1: "something was added since you last looked"
}

func newInbox() *inbox { return &inbox{wake: make(chan struct{}, 1)} }

func (b *inbox) put(r Received) {
	b.mu.Lock()
	b.items = append(b.items, r)
	b.mu.Unlock()
	b.signal()
}

func (b *inbox) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *inbox) take() (Received, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) == 0 {
		return Received{}, false
	}
	r := b.items[0]
	b.items[0] = Received{}
	b.items = b.items[1:]
	return r, true
}

func (b *inbox) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.items)
}

// manualDriver runs a system whose dispatcher is the manual executor.
type manualDriver struct {
	exec  *scheduler.Manual
	clock *scheduler.ManualClock
}

// driverFor returns the driver of sys when it runs in deterministic mode
// (its dispatcher is a *scheduler.Manual), nil otherwise.
func driverFor(sys *actor.System) *manualDriver {
	if m, ok := sys.Dispatcher().(*scheduler.Manual); ok {
		return &manualDriver{exec: m, clock: m.Clock()}
	}
	return nil
}

// virtualEpoch is where NewManualSystem starts its clock; virtual times in
// failure messages are shown relative to it.
var virtualEpoch = time.Unix(0, 0).UTC()

// waiter is the waiting half shared by Probe and EventProbe.
//
// Real mode: a wait is wall-clock time, woken by the inbox's signal.
//
// Deterministic mode: a wait first runs the system until idle. If nothing
// has arrived and the timeout is positive, the timeout is virtual time: the
// waiter advances the virtual clock one timer deadline at a time, running
// the system at each, and stops at the first deadline after which something
// has arrived, or at now+timeout. A timeout ≤ 0 never moves the clock.
type waiter struct {
	box *inbox
	drv *manualDriver
	// flush, when set, waits (deterministic mode) for deliveries that the
	// runtime makes on goroutines of its own (the EventStream's).
	flush func()
}

func (w *waiter) settle() {
	if w.drv != nil {
		w.drv.exec.RunUntilIdle()
	}
	if w.flush != nil {
		w.flush()
	}
}

// normalize turns the timeout of an expectation into the wait: in real mode
// a timeout ≤ 0 means def; in deterministic mode it means "no clock move".
func (w *waiter) normalize(timeout, def time.Duration) time.Duration {
	if timeout <= 0 {
		if w.drv != nil {
			return 0
		}
		return def
	}
	return timeout
}

// next takes the next item, waiting up to timeout (see waiter).
func (w *waiter) next(timeout time.Duration) (Received, bool) {
	if w.drv != nil {
		return w.nextManual(timeout)
	}
	if r, ok := w.box.take(); ok {
		return r, true
	}
	if timeout <= 0 {
		return Received{}, false
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case <-w.box.wake:
			if r, ok := w.box.take(); ok {
				return r, true
			}
		case <-timer.C:
			return w.box.take()
		}
	}
}

func (w *waiter) nextManual(timeout time.Duration) (Received, bool) {
	if w.drv.exec.Busy() {
		// The last run found the system never idle (the executor's busy
		// limit; the test has failed): a wait takes what has arrived and
		// runs it no more, or a wait that skips messages (FishForMsg) on a
		// system that keeps sending them would queue another run of them
		// each time, for ever (TestManualFishOnBusySystemReturns).
		if w.flush != nil {
			w.flush()
		}
		return w.box.take()
	}
	w.settle()
	if r, ok := w.box.take(); ok {
		return r, true
	}
	if timeout <= 0 {
		return Received{}, false
	}
	clock := w.drv.clock
	target := clock.Now().Add(timeout)
	for !w.drv.exec.Busy() {
		next, ok := clock.NextDeadline()
		if !ok || next.After(target) {
			break
		}
		w.drv.exec.Advance(max(next.Sub(clock.Now()), 0))
		if w.flush != nil {
			w.flush()
		}
		if r, ok := w.box.take(); ok {
			return r, true
		}
	}
	if w.drv.exec.Busy() {
		// The system never became idle (the executor's busy limit; the
		// test has failed): it stands at an instant it cannot leave, so
		// another Advance would run to the limit there again, for ever
		// when its next deadline is that instant
		// (TestManualProbeWaitOnBusySystemReturns).
		return w.box.take()
	}
	w.drv.exec.Advance(max(target.Sub(clock.Now()), 0))
	if w.flush != nil {
		w.flush()
	}
	return w.box.take()
}

// remaining returns a function that tells how much of timeout is left, on
// the wall clock in real mode and on the virtual clock in deterministic mode.
func (w *waiter) remaining(timeout time.Duration) func() time.Duration {
	if w.drv != nil {
		target := w.drv.clock.Now().Add(timeout)
		return func() time.Duration { return max(target.Sub(w.drv.clock.Now()), 0) }
	}
	deadline := time.Now().Add(timeout)
	return func() time.Duration { return max(time.Until(deadline), 0) }
}

// within says how long a failed wait waited, for failure messages.
func (w *waiter) within(timeout time.Duration) string {
	if w.drv == nil {
		return fmt.Sprintf("within %v", timeout)
	}
	now := w.drv.clock.Now().Sub(virtualEpoch)
	if timeout <= 0 {
		return fmt.Sprintf("by the time the system was idle (virtual time %v; timeout 0 does not move the clock)", now)
	}
	return fmt.Sprintf("within %v of virtual time (now %v)", timeout, now)
}
