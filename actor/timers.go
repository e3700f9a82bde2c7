package actor

import (
	"sync/atomic"
	"time"
)

// Timer is a timer an actor armed with SendAfter, SendEvery or Timers. It
// belongs to the actor: it is cancelled when the actor stops or restarts,
// and its methods may be called only on the actor's own turn (inside
// Receive or a ReenterAfter callback), like the Context.
//
// A timer costs a node on the system's timer queue (one heap for the whole
// system, driven by one timer on the system's Clock): no goroutine and no
// runtime timer. When it fires, a tick goes through the owner's mailbox;
// on the owner's turn the tick is dropped if the timer was cancelled
// meanwhile, or its message is delivered: to the owner itself, in order
// with its mailbox, or sent to the target (through the owner's send
// middleware). So once Cancel returns, or the owner has stopped, the timer
// delivers nothing more, even a tick that was already queued.
type Timer struct {
	node     timerNode
	owner    *cell
	target   *PID // nil: the owner
	msg      any
	key      any
	keyed    bool
	periodic bool
	done     bool // cancelled, or a single timer delivered (owner's turn only)
	// queued: a periodic timer's tick waits in the owner's mailbox. Set by
	// the firing, cleared on the owner's turn when the tick is handled.
	queued atomic.Bool
}

// minPeriod is the shortest period of a periodic timer: a shorter one
// (0 or negative included) is minPeriod. A period of a nanosecond kept
// the timer queue firing without pause (TestPeriodicTimerMinimumPeriod).
const minPeriod = time.Millisecond

// fireTimer implements timerTarget: the tick goes through the owner's
// mailbox (after a stop it is dropped there). A periodic timer whose last
// tick still waits there posts none: an owner that falls behind its
// period gets one tick when it catches up, not one for each period it
// missed, so its mailbox cannot fill without bound
// (TestPeriodicTimerKeepsOneTickQueued).
func (t *Timer) fireTimer() {
	if t.periodic && t.queued.Swap(true) {
		return
	}
	t.owner.postTick(t)
}

// Cancel stops the timer and reports whether it was active: false when it
// was cancelled already or, for a single timer, its message was delivered.
func (t *Timer) Cancel() bool {
	if t == nil || t.done {
		return false
	}
	t.owner.dropTimer(t)
	return true
}

// Active reports whether the timer may still deliver a message.
func (t *Timer) Active() bool { return t != nil && !t.done }

// Timers are an actor's keyed timers (see Context.Timers): each key has at
// most one timer, and starting a timer under a key cancels the one it had.
// Keyed timers deliver to the actor itself. Use them only on the actor's
// own turn.
type Timers struct{ c *cell }

// StartSingle delivers msg to the actor once, after d, replacing the timer
// of key.
func (ts Timers) StartSingle(key any, d time.Duration, msg any) *Timer {
	return ts.c.startTimer(key, true, nil, d, msg, false)
}

// StartPeriodic delivers msg to the actor every d (the first after d; d
// is at least a millisecond), replacing the timer of key. A clock that
// runs late skips the periods it missed rather than delivering a burst,
// and so does an actor that falls behind: one tick at most waits in its
// mailbox.
func (ts Timers) StartPeriodic(key any, d time.Duration, msg any) *Timer {
	return ts.c.startTimer(key, true, nil, d, msg, true)
}

// Cancel cancels the timer of key and reports whether there was an active one.
func (ts Timers) Cancel(key any) bool {
	if x := ts.c.x; x == nil || x.timers == nil {
		return false
	}
	t, ok := ts.c.x.timers.keyed[key]
	return ok && t.Cancel()
}

// IsActive reports whether key has an active timer.
func (ts Timers) IsActive(key any) bool {
	if x := ts.c.x; x == nil || x.timers == nil {
		return false
	}
	_, ok := ts.c.x.timers.keyed[key]
	return ok
}

// CancelAll cancels every timer of the actor, keyed or not.
func (ts Timers) CancelAll() { ts.c.cancelTimers() }

// actorTimers are the timers an actor holds, allocated on its first timer.
type actorTimers struct {
	live  map[*Timer]struct{}
	keyed map[any]*Timer
}

func (c *cell) timerSet() *actorTimers {
	x := c.ext()
	if x.timers == nil {
		x.timers = &actorTimers{live: make(map[*Timer]struct{}), keyed: make(map[any]*Timer)}
	}
	return x.timers
}

func (c *cell) Timers() Timers { return Timers{c: c} }

func (c *cell) SendAfter(d time.Duration, pid *PID, msg any) *Timer {
	if pid == nil {
		return c.nilTargetTimer(msg)
	}
	return c.startTimer(nil, false, pid, d, msg, false)
}

func (c *cell) SendEvery(d time.Duration, pid *PID, msg any) *Timer {
	if pid == nil {
		return c.nilTargetTimer(msg)
	}
	return c.startTimer(nil, false, pid, d, msg, true)
}

// nilTargetTimer answers SendAfter or SendEvery to a nil PID: msg is a
// dead letter (ErrNilPID) at once, and the timer is done. Inside a Timer a
// nil target means the owner, so arming one would deliver msg to the actor
// itself (TestSendAfterNilPID).
func (c *cell) nilTargetTimer(msg any) *Timer {
	c.sys.deadLetter(nil, msg, nil, ErrNilPID)
	return &Timer{owner: c, msg: msg, done: true}
}

func (c *cell) startTimer(key any, keyed bool, target *PID, d time.Duration, msg any, periodic bool) *Timer {
	at := c.timerSet()
	if keyed {
		if old, ok := at.keyed[key]; ok {
			old.Cancel()
		}
	}
	if target != nil && target.Equal(c.selfPID()) {
		target = nil
	}
	t := &Timer{owner: c, target: target, msg: msg, key: key, keyed: keyed, periodic: periodic}
	t.node.target = t
	if periodic && d < minPeriod {
		d = minPeriod
	}
	var period time.Duration
	if periodic {
		period = d
	}
	if !c.sys.tq.arm(&t.node, d, period) {
		t.done = true // the system has shut down
		return t
	}
	at.live[t] = struct{}{}
	if keyed {
		at.keyed[key] = t
	}
	return t
}

// dropTimer marks t done, takes it off the queue and out of the owner's set.
func (c *cell) dropTimer(t *Timer) {
	t.done = true
	c.sys.tq.cancel(&t.node)
	if x := c.x; x != nil && x.timers != nil {
		delete(x.timers.live, t)
		if t.keyed && x.timers.keyed[t.key] == t {
			delete(x.timers.keyed, t.key)
		}
	}
}

// cancelTimers cancels every timer of c (at stop and restart).
func (c *cell) cancelTimers() {
	x := c.x
	if x == nil || x.timers == nil {
		return
	}
	for t := range x.timers.live {
		c.dropTimer(t)
	}
}

// onTimer handles a tick on c's turn: dropped when the timer is no longer
// active, else its message is delivered.
func (c *cell) onTimer(t *Timer) {
	if t.owner != c {
		return
	}
	if t.periodic {
		t.queued.Store(false)
	}
	if t.done {
		return
	}
	if !t.periodic {
		c.dropTimer(t)
	}
	if t.target == nil {
		c.invokeUser(envelope{msg: t.msg})
		return
	}
	c.send(t.target, t.msg, nil)
}
