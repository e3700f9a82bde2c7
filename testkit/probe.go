package testkit

import (
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// DefaultTimeout is the wait of expectations called with timeout 0.
const DefaultTimeout = 3 * time.Second

// Received is one message a probe got, with its sender.
type Received struct {
	Msg    any
	Sender *actor.PID
}

// Probe is an actor that records every message it receives (lifecycle
// messages excepted, Terminated included) so a test can assert on them.
// Its methods are called from the test goroutine.
type Probe struct {
	t     testing.TB
	sys   *actor.System
	pid   *actor.PID
	mu    sync.Mutex
	queue []Received
	wake  chan struct{}
	last  Received
	step  func() int
}

// NewProbe spawns a probe in sys.
func NewProbe(t testing.TB, sys *actor.System) *Probe {
	t.Helper()
	p := &Probe{t: t, sys: sys, wake: make(chan struct{}, 1)}
	p.pid = sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
			return
		case *watchCmd:
			c.Watch(m.pid)
			close(m.done)
			return
		}
		p.mu.Lock()
		p.queue = append(p.queue, Received{Msg: c.Message(), Sender: c.Sender()})
		p.mu.Unlock()
		select {
		case p.wake <- struct{}{}:
		default:
		}
	}))
	return p
}

// NewManualProbe spawns a probe in a deterministic system; its expectations
// run the system until idle before they look.
func NewManualProbe(t testing.TB, sys *ManualSystem) *Probe {
	p := NewProbe(t, sys.System)
	p.step = sys.RunUntilIdle
	sys.RunUntilIdle()
	return p
}

// PID is the probe's address.
func (p *Probe) PID() *actor.PID { return p.pid }

// Sender is the sender of the last message taken by an expectation.
func (p *Probe) Sender() *actor.PID { return p.last.Sender }

// Last is the last message taken by an expectation.
func (p *Probe) Last() Received { return p.last }

// Send sends msg to pid with the probe as the sender.
func (p *Probe) Send(pid *actor.PID, msg any) { p.sys.Root().SendWithSender(pid, msg, p.pid) }

// Reply answers the sender of the last message taken.
func (p *Probe) Reply(msg any) {
	p.t.Helper()
	if p.last.Sender == nil {
		p.t.Fatalf("testkit: Reply(%T): the last message (%T) had no sender", msg, p.last.Msg)
	}
	p.sys.Root().SendWithSender(p.last.Sender, msg, p.pid)
}

// Watch makes the probe watch pid: it then receives *actor.Terminated.
// It returns once the watch is in place.
func (p *Probe) Watch(pid *actor.PID) {
	p.t.Helper()
	cmd := &watchCmd{pid: pid, done: make(chan struct{})}
	p.sys.Root().Send(p.pid, cmd)
	if p.step != nil {
		p.step()
	}
	select {
	case <-cmd.done:
	case <-time.After(DefaultTimeout):
		p.t.Fatalf("testkit: Watch(%s): the probe did not take the command", pid)
	}
}

type watchCmd struct {
	pid  *actor.PID
	done chan struct{}
}

// next takes the next message, waiting up to timeout.
func (p *Probe) next(timeout time.Duration) (Received, bool) {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	var timer *time.Timer
	for {
		if p.step != nil {
			p.step()
		}
		p.mu.Lock()
		if len(p.queue) > 0 {
			r := p.queue[0]
			p.queue[0] = Received{}
			p.queue = p.queue[1:]
			p.mu.Unlock()
			p.last = r
			return r, true
		}
		p.mu.Unlock()
		if p.step != nil {
			return Received{}, false // deterministic: nothing more will come without a clock move
		}
		if timer == nil {
			timer = time.NewTimer(timeout)
			defer timer.Stop()
		}
		select {
		case <-p.wake:
		case <-timer.C:
			return Received{}, false
		}
	}
}

func describe(v any) string {
	if v == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%T %+v", v, v)
}

// ExpectMsg waits up to timeout for the next message and fails the test
// unless it is a T.
func ExpectMsg[T any](p *Probe, timeout time.Duration) T {
	p.t.Helper()
	var zero T
	r, ok := p.next(timeout)
	if !ok {
		p.t.Fatalf("testkit: expected %v, got nothing within %v", reflect.TypeFor[T](), timeout)
		return zero
	}
	v, ok := r.Msg.(T)
	if !ok {
		p.t.Fatalf("testkit: expected %v, got %s", reflect.TypeFor[T](), describe(r.Msg))
	}
	return v
}

// ExpectMsgEqual waits for the next message and fails unless it equals want
// (reflect.DeepEqual).
func (p *Probe) ExpectMsgEqual(want any, timeout time.Duration) {
	p.t.Helper()
	r, ok := p.next(timeout)
	if !ok {
		p.t.Fatalf("testkit: expected %s, got nothing within %v", describe(want), timeout)
		return
	}
	if !reflect.DeepEqual(r.Msg, want) {
		p.t.Fatalf("testkit: expected %s, got %s", describe(want), describe(r.Msg))
	}
}

// ExpectNoMsg fails if a message arrives within d. In deterministic mode it
// runs the system until idle and checks that nothing arrived.
func (p *Probe) ExpectNoMsg(d time.Duration) {
	p.t.Helper()
	if p.step == nil && d <= 0 {
		d = 100 * time.Millisecond
	}
	if r, ok := p.next(d); ok {
		p.t.Fatalf("testkit: expected no message, got %s", describe(r.Msg))
	}
}

// FishForMsg skips messages until one of type T satisfies pred, waiting up
// to timeout in all; skipped messages are lost.
func FishForMsg[T any](p *Probe, pred func(T) bool, timeout time.Duration) T {
	p.t.Helper()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.Now().Add(timeout)
	var seen []string
	for {
		left := time.Until(deadline)
		if left <= 0 && p.step == nil {
			break
		}
		r, ok := p.next(max(left, time.Millisecond))
		if !ok {
			break
		}
		if v, ok := r.Msg.(T); ok && (pred == nil || pred(v)) {
			return v
		}
		seen = append(seen, describe(r.Msg))
	}
	var zero T
	p.t.Fatalf("testkit: no %v matched within %v; skipped %v", reflect.TypeFor[T](), timeout, seen)
	return zero
}

// ExpectTerminated waits for the Terminated of pid (the probe must watch it).
func (p *Probe) ExpectTerminated(pid *actor.PID, timeout time.Duration) *actor.Terminated {
	p.t.Helper()
	t := ExpectMsg[*actor.Terminated](p, timeout)
	if !t.Who.Equal(pid) {
		p.t.Fatalf("testkit: expected Terminated of %s, got Terminated of %s", pid, t.Who)
	}
	return t
}

// Eventually fails the test unless cond becomes true within timeout. It
// re-checks cond on a short tick; use it for state that has no event.
func Eventually(t testing.TB, cond func() bool, timeout time.Duration, msgAndArgs ...any) {
	t.Helper()
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("testkit: condition not met within %v %v", timeout, fmt.Sprint(msgAndArgs...))
		case <-tick.C:
		}
	}
}
