package actor

import (
	"log/slog"
	"time"
)

// Context is what an actor sees while it handles a message. It is valid only
// inside Receive, on the goroutine that called Receive; do not keep it.
type Context interface {
	// Self is this actor's PID; Parent its parent's (nil for guardians).
	Self() *PID
	Parent() *PID
	// Message is the message being handled; Sender its sender, or nil.
	Message() any
	Sender() *PID
	// MessageHeader is the Header the current message arrived with (see
	// MessageEnvelope), or nil. It belongs to the message: do not change it.
	MessageHeader() Header
	// Children returns this actor's live children, in spawn order. A child
	// leaves the list before its watchers get Terminated, so one whose stop
	// was reported (StopFuture completed) is never listed.
	Children() []*PID
	// System returns the actor system.
	System() *System
	// Logger returns the system logger with this actor's PID attached.
	Logger() *slog.Logger

	// Send delivers msg to pid with no sender.
	Send(pid *PID, msg any)
	// Request delivers msg to pid with this actor as the sender, so the
	// receiver can Respond.
	Request(pid *PID, msg any)
	// RequestFuture delivers msg to pid with a future as the sender; the
	// future fails with ErrTimeout after timeout (none when timeout ≤ 0),
	// or with ErrSystemStopped when the system shuts down before either.
	RequestFuture(pid *PID, msg any, timeout time.Duration) *Future
	// Respond sends msg to the sender of the current message (a dead letter
	// when there is none).
	Respond(msg any)
	// Forward sends the current message to pid, keeping its sender.
	Forward(pid *PID)

	// Spawn starts a child with a generated name. It returns nil, and
	// nothing is spawned, when the spawn fails (nil Props, ErrNilProps; the
	// system stopped; a SpawnMiddleware refused it or panicked): use
	// SpawnNamed with name "" for the same spawn with its error.
	Spawn(props *Props) *PID
	// SpawnPrefix starts a child whose generated name starts with prefix;
	// nil when the spawn fails, as Spawn.
	SpawnPrefix(props *Props, prefix string) *PID
	// SpawnNamed starts a child with the given name ("" generates one), or
	// fails with ErrNameExists, ErrNilProps, ErrSystemStopped or a
	// SpawnMiddleware's error.
	SpawnNamed(props *Props, name string) (*PID, error)

	// Stop stops pid after the message it is handling; queued messages
	// become dead letters. Poison stops it after the messages already queued.
	Stop(pid *PID)
	Poison(pid *PID)
	// Watch asks for a Terminated message when pid ends; Unwatch cancels:
	// once it returns, no Terminated of pid reaches Receive, even one
	// already queued (until pid is watched again).
	Watch(pid *PID)
	Unwatch(pid *PID)

	// SetReceiveTimeout delivers ReceiveTimeout after d without messages,
	// and again every d while none come (d ≤ 0 turns it off; so do a stop
	// and a restart). Every user message resets the clock, the actor's
	// own timer messages included; a ReenterAfter callback does not.
	// ReceiveTimeout returns the current setting.
	SetReceiveTimeout(d time.Duration)
	ReceiveTimeout() time.Duration

	// SendAfter sends msg to pid once, after d; SendEvery every d (at
	// least a millisecond; one tick at most waits in this actor's mailbox,
	// so an actor that falls behind skips periods, see StartPeriodic). The
	// timer belongs to this actor: it is cancelled when the actor stops or
	// restarts, and its message goes out on the actor's own turn (see
	// Timer). A nil pid makes msg a dead letter (ErrNilPID) at once.
	// Timers returns the actor's keyed timers.
	SendAfter(d time.Duration, pid *PID, msg any) *Timer
	SendEvery(d time.Duration, pid *PID, msg any) *Timer
	Timers() Timers

	// ReenterAfter calls fn with fut's result on this actor's own turn,
	// once fut completes: fn may touch the actor's state and use this
	// Context (Message and Sender are nil there). docs/actors.md
	// ("Continuations") has the ordering, Stash and Become inside fn, and
	// what a stop or restart does to a pending callback.
	ReenterAfter(fut *Future, fn func(res any, err error))

	// Stash keeps the current message aside (not a lifecycle notice:
	// Started, Stopping, Stopped, Restarting); UnstashAll puts stashed
	// messages back ahead of the mailbox, in the order they were stashed.
	Stash()
	UnstashAll()

	// Become replaces the behaviour; BecomeStacked pushes one that
	// UnbecomeStacked pops. With no behaviour set, Receive of the actor runs.
	Become(r ReceiveFunc)
	BecomeStacked(r ReceiveFunc)
	UnbecomeStacked()
}

func (c *cell) Self() *PID       { return c.selfPID() }
func (c *cell) Parent() *PID     { return c.parent }
func (c *cell) Message() any     { return c.msg }
func (c *cell) Sender() *PID     { return c.sender }
func (c *cell) System() *System  { return c.sys }
func (c *cell) Children() []*PID { return c.childList() }

func (c *cell) MessageHeader() Header {
	if c.x == nil {
		return nil
	}
	return c.x.header
}

func (c *cell) childList() []*PID {
	if g := c.kids(); g != nil {
		var kids []*cell
		for i := range g.shards {
			s := &g.shards[i]
			s.mu.Lock()
			for _, ch := range s.set.list {
				if ch != nil {
					kids = append(kids, ch)
				}
			}
			s.mu.Unlock()
		}
		return spawnOrder(kids)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.children == nil {
		return nil
	}
	return c.children.snapshot()
}

func (c *cell) Logger() *slog.Logger {
	if c.ext().logger == nil {
		c.ext().logger = c.sys.logger.With("pid", c.selfPID().String())
	}
	return c.ext().logger
}

func (c *cell) Send(pid *PID, msg any) { c.send(pid, msg, nil) }

func (c *cell) Request(pid *PID, msg any) { c.send(pid, msg, c.selfPID()) }

func (c *cell) send(pid *PID, msg any, sender *PID) {
	if len(c.props.o().sendMW) > 0 {
		ch := c.chains()
		// The send chain gets the Context the actor was handed (a receive
		// middleware's wrapper, if any), so that what a receive middleware
		// puts in its wrapper reaches the send middleware.
		var ctx Context = c
		if ch.cur != nil {
			ctx = ch.cur
		}
		ch.send(ctx, pid, msg, sender)
		return
	}
	c.sys.send(c.worker, pid, msg, sender)
}

// rawSend is the innermost SendFunc of c's send chain; the Context it is
// handed may be a middleware's wrapper, and is not needed.
func (c *cell) rawSend(_ Context, target *PID, msg any, sender *PID) {
	c.sys.send(c.worker, target, msg, sender)
}

func (c *cell) RequestFuture(pid *PID, msg any, timeout time.Duration) *Future {
	f := c.sys.newFuture(pid, timeout)
	c.send(pid, msg, &f.pidv)
	c.worker.Release() // a Result or Wait may follow: see requestSignal
	return f
}

func (c *cell) Respond(msg any) {
	if c.sender == nil {
		c.sys.deadLetter(nil, msg, c.selfPID(), nil)
		return
	}
	c.send(c.sender, msg, c.selfPID())
}

func (c *cell) Forward(pid *PID) {
	msg := c.msg
	if x := c.x; x != nil && x.header != nil {
		msg = &MessageEnvelope{Header: x.header, Message: msg}
	}
	c.send(pid, msg, c.sender)
}

func (c *cell) Spawn(props *Props) *PID {
	return pidOrNil(c.spawnChild(c.worker, props, "", "", nil))
}

func (c *cell) SpawnPrefix(props *Props, prefix string) *PID {
	return pidOrNil(c.spawnChild(c.worker, props, "", prefix, nil))
}

// pidOrNil is the PID of a spawn that succeeded, nil for one that failed:
// Spawn's contract. Every failed spawn returns a nil PID now; before, a
// refusal found after the actor was registered (ErrSystemStopped,
// ErrParentStopping) came with the PID of an actor that never ran, and
// Spawn returned it (TestSpawnReturnsNilOnFailure,
// TestNewuser8SpawnNamedAfterShutdownReturnsNoPID).
func pidOrNil(pid *PID, err error) *PID {
	if err != nil {
		return nil
	}
	return pid
}

func (c *cell) SpawnNamed(props *Props, name string) (*PID, error) {
	return c.spawnChild(c.worker, props, name, "", nil)
}

func (c *cell) Stop(pid *PID)   { c.sys.sendSystem(c.worker, pid, stopSys) }
func (c *cell) Poison(pid *PID) { c.sys.send(c.worker, pid, &PoisonPill{}, nil) }

func (c *cell) Watch(pid *PID) {
	if pid == nil {
		return // nothing to watch; keyOf would panic once the set is a map
	}
	c.ext().watching.add(pid)
	c.sys.sendSystem(c.worker, pid, &Watch{Watcher: c.selfPID()})
}

func (c *cell) Unwatch(pid *PID) {
	if pid == nil {
		return
	}
	c.ext().watching.remove(pid)
	c.x.cancelTerms(pid)
	c.sys.sendSystem(c.worker, pid, &Unwatch{Watcher: c.selfPID()})
}

func (c *cell) Stash() {
	switch c.msg.(type) {
	case nil, *Started, *Stopping, *Stopped, *Restarting:
		// Not user messages: one stashed by a behaviour that stashes what
		// it does not expect would be put back ahead of the mailbox of the
		// next instance (TestStashSkipsLifecycleMessages).
		return
	}
	msg := c.msg
	if h := c.ext().header; h != nil {
		msg = &MessageEnvelope{Header: h, Message: msg}
	}
	c.ext().stash = append(c.ext().stash, envelope{msg: msg, sender: c.sender})
}

func (c *cell) UnstashAll() {
	if c.x == nil || len(c.x.stash) == 0 {
		return
	}
	x := c.ext()
	x.pending = append(x.stash, x.pending...)
	x.stash = nil
}

func (c *cell) Become(r ReceiveFunc) { c.ext().behaviour = append(c.ext().behaviour[:0], r) }

func (c *cell) BecomeStacked(r ReceiveFunc) { c.ext().behaviour = append(c.ext().behaviour, r) }

func (c *cell) UnbecomeStacked() {
	if c.x == nil {
		return
	}
	if n := len(c.ext().behaviour); n > 0 {
		c.ext().behaviour[n-1] = nil
		c.ext().behaviour = c.ext().behaviour[:n-1]
	}
}

// Supervisor implementation: the parent acts on its children.

func (c *cell) ResumeChildren(pids ...*PID) {
	for _, p := range pids {
		c.sys.sendSystem(c.worker, p, resumeSys)
	}
}

func (c *cell) RestartChildren(pids ...*PID) {
	for _, p := range pids {
		c.sys.sendSystem(c.worker, p, restartSys)
	}
}

func (c *cell) RestartChildrenAfter(d time.Duration, pids ...*PID) {
	sys := c.sys
	sys.timers.After(sys.clock, d, func() {
		for _, p := range pids {
			sys.sendSystem(nil, p, restartSys)
		}
	})
}

func (c *cell) StopChildren(pids ...*PID) {
	for _, p := range pids {
		c.sys.sendSystem(c.worker, p, stopSys)
	}
}

// Escalate fails c with the child's failure, except on a guardian: a
// top-level actor's failure that the GuardianStrategy escalates stops that
// actor, logged at Error. Before, the root guardian stopped the user
// guardian, and with it every top-level actor, while the system went on
// running with no user actors and refused every spawn
// (TestNewuser8EscalateFromTopLevelLeavesAZombieSystem).
func (c *cell) Escalate(f Failure) {
	if c.sys.isGuardian(c) {
		c.sys.logger.Error("actor: a top-level actor's failure escalated past its guardian; stopping the actor",
			"pid", f.Child.String(), "err", f.Err)
		c.StopChildren(f.Child)
		return
	}
	c.ext().escalate = &f
}

func (c *cell) Now() time.Time { return c.sys.clock.Now() }

// Receive timeout: one timer at a time; messages only record their time,
// and the timer re-arms itself for the remainder when it fires early.

func (c *cell) SetReceiveTimeout(d time.Duration) {
	c.cancelReceiveTimeout()
	if d <= 0 {
		if c.x != nil {
			c.x.recvTimeout = 0
		}
		return
	}
	c.ext().recvTimeout = d
	c.ext().lastActivity = c.sys.clock.Now()
	c.armTimeout(d)
}

func (c *cell) ReceiveTimeout() time.Duration {
	if c.x == nil {
		return 0
	}
	return c.x.recvTimeout
}

func (c *cell) armTimeout(d time.Duration) {
	c.ext().timeoutGen++
	tick := &timeoutMsg{gen: c.ext().timeoutGen}
	c.ext().cancelTimeout = c.sys.timers.After(c.sys.clock, d, func() {
		c.postTick(tick)
	})
}

func (c *cell) cancelReceiveTimeout() {
	x := c.x
	if x == nil {
		return
	}
	if x.cancelTimeout != nil {
		x.cancelTimeout()
		x.cancelTimeout = nil
	}
	x.timeoutGen++
}

func (c *cell) onTimeoutTick(m *timeoutMsg) {
	if c.x == nil || m.gen != c.x.timeoutGen || c.x.recvTimeout <= 0 {
		return
	}
	c.ext().cancelTimeout = nil
	idle := c.sys.clock.Now().Sub(c.ext().lastActivity)
	if idle < c.ext().recvTimeout {
		c.armTimeout(c.ext().recvTimeout - idle)
		return
	}
	c.ext().lastActivity = c.sys.clock.Now()
	c.armTimeout(c.ext().recvTimeout)
	c.deliver(receiveTimeoutMsg)
}
