package testkit

import (
	"reflect"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Probe is an actor that records every message it receives, so a test can
// assert on them. It records everything but its own lifecycle messages
// (Started, Stopping, Stopped, Restarting); *actor.Terminated of watched
// actors is recorded. Its queue is unbounded: nothing is ever dropped.
//
// The expectations (ExpectMsg, ExpectMsgEqual, ExpectNoMsg, FishForMsg,
// ExpectTerminated) take messages in arrival order; a message taken by a
// failed expectation is gone. A failure names what arrived instead, with its
// type, value and sender.
//
// In a system whose dispatcher is the manual executor (NewManualSystem),
// every expectation first runs the system until idle, and its timeout is
// virtual time (see NewManualSystem): the result is the same on every run.
//
// A Probe's methods are for the test goroutine; they are not safe for
// concurrent use.
type Probe struct {
	waiter
	t    testing.TB
	sys  *actor.System
	pid  *actor.PID
	last Received
}

// NewProbe spawns a probe in sys, named "probe$<n>". It detects
// deterministic mode from the system's dispatcher, so it works for
// NewSystem and NewManualSystem (pass ManualSystem.System) alike. The probe
// stops with the system.
func NewProbe(t testing.TB, sys *actor.System) *Probe {
	t.Helper()
	p := &Probe{t: t, sys: sys, waiter: waiter{box: newInbox(), drv: driverFor(sys)}}
	if sys.Stopped() {
		t.Fatalf("testkit: NewProbe: %v", actor.ErrSystemStopped)
		return p
	}
	p.pid = sys.Root().SpawnPrefix(actor.PropsFromFunc(p.receive), "probe")
	return p
}

// NewManualProbe spawns a probe in a deterministic system and runs the
// system until idle, so the probe has started when it returns.
func NewManualProbe(t testing.TB, sys *ManualSystem) *Probe {
	t.Helper()
	p := NewProbe(t, sys.System)
	sys.RunUntilIdle()
	return p
}

func (p *Probe) receive(c actor.Context) {
	switch m := c.Message().(type) {
	case *actor.Started, *actor.Stopping, *actor.Stopped, *actor.Restarting:
		return
	case *probeCmd:
		m.run(c)
		close(m.done)
		return
	}
	p.box.put(Received{Msg: c.Message(), Sender: c.Sender()})
}

// probeCmd runs inside the probe actor (Watch, Unwatch need its Context).
type probeCmd struct {
	run  func(actor.Context)
	done chan struct{}
}

// do runs f inside the probe and returns once it has run.
func (p *Probe) do(what string, f func(actor.Context)) {
	p.t.Helper()
	cmd := &probeCmd{run: f, done: make(chan struct{})}
	p.sys.Root().Send(p.pid, cmd)
	if p.drv != nil {
		p.drv.exec.RunUntilIdle()
		select {
		case <-cmd.done:
		default:
			p.fatalf("%s: the probe did not run the command (is the system stopped?)", what)
		}
		return
	}
	timer := time.NewTimer(DefaultTimeout)
	defer timer.Stop()
	select {
	case <-cmd.done:
	case <-timer.C:
		p.fatalf("%s: the probe did not run the command within %v", what, DefaultTimeout)
	}
}

func (p *Probe) fatalf(format string, args ...any) {
	p.t.Helper()
	p.t.Fatalf("testkit: probe %s: "+format, append([]any{p.pid}, args...)...)
}

// take takes the next message and remembers it as the last one.
func (p *Probe) take(wait time.Duration) (Received, bool) {
	r, ok := p.next(wait)
	if ok {
		p.last = r
	}
	return r, ok
}

// PID is the probe's address.
func (p *Probe) PID() *actor.PID { return p.pid }

// Sender is the sender of the last message taken by an expectation (nil if
// it had none).
func (p *Probe) Sender() *actor.PID { return p.last.Sender }

// Last is the last message taken by an expectation.
func (p *Probe) Last() Received { return p.last }

// Len returns the number of messages received and not yet taken. It does
// not run the system.
func (p *Probe) Len() int { return p.box.len() }

// Send sends msg to pid with the probe as the sender, so pid's Respond
// reaches the probe.
func (p *Probe) Send(pid *actor.PID, msg any) { p.sys.Root().SendWithSender(pid, msg, p.pid) }

// Reply answers the sender of the last message taken, with the probe as
// the sender. It fails the test when that message had no sender.
func (p *Probe) Reply(msg any) {
	p.t.Helper()
	if p.last.Sender == nil {
		p.fatalf("Reply(%s): the last message taken (%s) had no sender", describe(msg), describe(p.last.Msg))
		return
	}
	p.sys.Root().SendWithSender(p.last.Sender, msg, p.pid)
}

// Watch makes the probe watch pid: when pid ends the probe receives
// *actor.Terminated (at once, with Why NotFound, if pid does not exist).
// It returns once the watch has been sent.
func (p *Probe) Watch(pid *actor.PID) {
	p.t.Helper()
	p.do("Watch("+pid.String()+")", func(c actor.Context) { c.Watch(pid) })
}

// Unwatch cancels a Watch. It returns once the cancellation has been sent.
func (p *Probe) Unwatch(pid *actor.PID) {
	p.t.Helper()
	p.do("Unwatch("+pid.String()+")", func(c actor.Context) { c.Unwatch(pid) })
}

// Receive takes the next message if one arrives within timeout, without
// failing the test when none does (0: DefaultTimeout; in deterministic mode
// 0 only runs the system until idle, and a positive timeout is virtual
// time). It is for collecting a sequence to assert on as a whole.
func (p *Probe) Receive(timeout time.Duration) (Received, bool) {
	return p.take(p.normalize(timeout, DefaultTimeout))
}

// ExpectMsg takes the next message, waiting up to timeout (0: DefaultTimeout;
// virtual time in deterministic mode), and fails the test unless it is a T.
// It returns the message.
func ExpectMsg[T any](p *Probe, timeout time.Duration) T {
	p.t.Helper()
	var zero T
	wait := p.normalize(timeout, DefaultTimeout)
	r, ok := p.take(wait)
	if !ok {
		p.fatalf("ExpectMsg[%s]: got no message %s", typeName[T](), p.within(wait))
		return zero
	}
	v, ok := r.Msg.(T)
	if !ok {
		p.fatalf("ExpectMsg[%s]: got %s instead", typeName[T](), r)
		return zero
	}
	return v
}

// ExpectMsgEqual takes the next message, waiting up to timeout, and fails
// the test unless it equals want (reflect.DeepEqual: pointers compare by
// what they point to).
func (p *Probe) ExpectMsgEqual(want any, timeout time.Duration) {
	p.t.Helper()
	wait := p.normalize(timeout, DefaultTimeout)
	r, ok := p.take(wait)
	if !ok {
		p.fatalf("ExpectMsgEqual(%s): got no message %s", describe(want), p.within(wait))
		return
	}
	if !reflect.DeepEqual(r.Msg, want) {
		p.fatalf("ExpectMsgEqual(%s): got %s instead", describe(want), r)
	}
}

// ExpectNoMsg fails the test if a message is queued or arrives within d
// (0: DefaultNoMsgWait). In deterministic mode it runs the system until
// idle and, for d > 0, advances the virtual clock by d (firing the timers
// due meanwhile), then checks that nothing arrived; d = 0 checks without
// moving the clock.
func (p *Probe) ExpectNoMsg(d time.Duration) {
	p.t.Helper()
	wait := p.normalize(d, DefaultNoMsgWait)
	if r, ok := p.take(wait); ok {
		p.fatalf("ExpectNoMsg: got %s %s", r, p.within(wait))
	}
}

// FishForMsg takes messages until one is a T for which pred is true (nil
// pred: any T), waiting up to timeout in all, and returns it. The messages
// skipped on the way are gone; when none matches, the failure lists them.
func FishForMsg[T any](p *Probe, pred func(T) bool, timeout time.Duration) T {
	p.t.Helper()
	wait := p.normalize(timeout, DefaultTimeout)
	v, skipped, ok := fish(p.take, p.remaining(wait), pred)
	if ok {
		return v
	}
	p.fatalf("FishForMsg[%s]: no match %s; skipped %s", typeName[T](), p.within(wait), describeAll(skipped))
	return v
}

// fish takes messages with take until one is a T for which pred is true
// (nil pred: any T), or take finds nothing within the time left; it returns
// the match and the messages skipped on the way.
func fish[T any](take func(time.Duration) (Received, bool), left func() time.Duration, pred func(T) bool) (T, []Received, bool) {
	var skipped []Received
	for {
		r, ok := take(left())
		if !ok {
			var zero T
			return zero, skipped, false
		}
		if v, ok := r.Msg.(T); ok && (pred == nil || pred(v)) {
			return v, skipped, true
		}
		skipped = append(skipped, r)
	}
}

// ExpectTerminated takes the next message, waiting up to timeout, and fails
// the test unless it is the *actor.Terminated of pid (the probe must Watch
// pid). It returns the Terminated it got, nil when nothing came.
func (p *Probe) ExpectTerminated(pid *actor.PID, timeout time.Duration) *actor.Terminated {
	p.t.Helper()
	wait := p.normalize(timeout, DefaultTimeout)
	r, ok := p.take(wait)
	if !ok {
		p.fatalf("ExpectTerminated(%s): got no message %s", pid, p.within(wait))
		return nil
	}
	term, ok := r.Msg.(*actor.Terminated)
	if !ok {
		p.fatalf("ExpectTerminated(%s): got %s instead", pid, r)
		return nil
	}
	if !term.Who.Equal(pid) {
		p.fatalf("ExpectTerminated(%s): got the Terminated of %s (%s) instead", pid, term.Who, term.Why)
	}
	return term
}
