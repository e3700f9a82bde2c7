package actor

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/scheduler"
)

// envelope is what a mailbox slot holds: the message and its sender, by
// value, so that a send allocates nothing beyond the message.
type envelope struct {
	msg    any
	sender *PID
}

type cellState uint8

const (
	stateAlive cellState = iota
	stateRestarting
	stateStopping
	stateStopped
)

// cell is a local actor: its mailbox, its instance and everything the
// runtime keeps for it. It is the actor's Process, its Context and its
// scheduler.Runnable. Apart from mu-guarded children and the mailbox, its
// fields are touched only by the invocation that owns the mailbox.
//
// One cell exists per actor, so its size is the runtime's memory per idle
// actor: TestCellSize pins it to the 416-byte size class. Small fields sit
// together at the end; what most actors never use is in cellExtra, a
// guardian's children are in its System, and the ID's bytes are in idbuf.
type cell struct {
	mb     mailbox.Mailbox[envelope]
	pid    PID // the actor's own PID (selfPID): one allocation less per spawn
	sys    *System
	props  *Props
	parent *PID
	idx    scheduler.MailboxIndex
	worker *scheduler.Worker

	actor  Actor
	msg    any
	sender *PID
	x      *cellExtra // rarely used state, allocated on first use

	mu       sync.Mutex // guards children, childWait and the children's childSlot
	children *childSet  // spawn order; nil until the first child (guardians: see kids)

	mw *chains // nil without middleware

	km *kindMetrics

	state     cellState
	childWait bool  // winding down: stopped children must send Terminated
	childSlot int32 // position in the parent's childSet; the lock of that set guards it

	idbuf cellID // the bytes of pid.ID, when it fits (cell_id.go)
}

// selfPID returns the actor's PID.
func (c *cell) selfPID() *PID { return &c.pid }

// cellExtra holds what most actors never use, so that a cell stays small.
type cellExtra struct {
	pending []envelope // unstashed, processed before the mailbox

	behaviour []ReceiveFunc
	stash     []envelope
	stats     RestartStats
	escalate  *Failure
	logger    *slog.Logger
	// watchers: usually few (a scan), indexed once many, as a remote
	// peer's watches of one actor may be (pidSet); watcher1 backs the first.
	watchers pidSet
	watcher1 [1]*PID
	watching pidSet
	terms    []queuedTerm // Terminated of watched actors, queued and not yet delivered

	recvTimeout   time.Duration
	timeoutGen    uint64
	lastActivity  time.Time
	cancelTimeout func() bool

	timers      *actorTimers // SendAfter, SendEvery, Timers
	incarnation uint32       // bumped at each restart: stale continuations are dropped

	onStopped func() // guardians: signal shutdown progress
	failures  int32  // consecutive failures, reset by a message handled

	header Header // the current message's header (MessageEnvelope), while it is handled
}

// queuedTerm is a Terminated the runtime queued for a watcher
// (onTerminated); cancelled once the watcher unwatches its actor before it
// is delivered.
type queuedTerm struct {
	t         *Terminated
	cancelled bool
}

// takeTerm forgets m, a *Terminated taken from the mailbox, and reports
// whether it goes to Receive: false for one whose watch an Unwatch
// cancelled after it was queued (TestNoTerminatedAfterUnwatch). One the
// runtime did not queue (a user sent it) always does.
func (x *cellExtra) takeTerm(m *Terminated) bool {
	for i, e := range x.terms {
		if e.t == m {
			last := len(x.terms) - 1
			x.terms[i] = x.terms[last]
			x.terms[last] = queuedTerm{}
			x.terms = x.terms[:last]
			return !e.cancelled
		}
	}
	return true
}

// cancelTerms cancels the queued Terminated of pid (Unwatch).
func (x *cellExtra) cancelTerms(pid *PID) {
	for i := range x.terms {
		if x.terms[i].t.Who.Equal(pid) {
			x.terms[i].cancelled = true
		}
	}
}

func (c *cell) ext() *cellExtra {
	if c.x == nil {
		c.x = &cellExtra{}
	}
	return c.x
}

// invokeMW is the invoke middleware chain and its reusable context.
type invokeMW struct {
	chain  *scheduler.CompositeMiddleware
	ictx   scheduler.InvokeContext
	queued atomic.Int32 // user messages left after the last invocation (kind metrics only)
}

var _ scheduler.Runnable = (*cell)(nil)
var _ Process = (*cell)(nil)
var _ Context = (*cell)(nil)

// SendUser implements Process.
func (c *cell) SendUser(_ *PID, msg any, sender *PID) { c.postUser(nil, msg, sender) }

func (c *cell) postUser(w *scheduler.Worker, msg any, sender *PID) {
	if err := c.mb.PostUser(w, envelope{msg: msg, sender: sender}); err != nil {
		c.sys.deadLetter(c.selfPID(), msg, sender, ErrMailboxFull)
	}
}

// postTick posts one of the actor's own ticks (a timer's, the receive
// timeout's, a ReenterAfter continuation) to its mailbox. A full bounded
// mailbox refuses or drops user messages, not these: a tick it refuses
// here, or drops (onDrop in newCell: DropNewest, or DropOldest pushing it
// out), goes through the system queue instead, and handleSystem puts it
// ahead of the mailbox (pending), where user messages run. Before, such a
// tick was lost: the timer's message never came, the callback never ran,
// and the receive timeout, which re-arms from its tick, stopped for good
// (TestBoundedMailboxKeepsRuntimeTicks).
func (c *cell) postTick(msg any) {
	if err := c.mb.PostUser(nil, envelope{msg: msg}); err != nil {
		c.mb.PostSystem(nil, envelope{msg: msg})
	}
}

// isTick reports whether msg is one of an actor's own ticks (postTick).
func isTick(msg any) bool {
	switch msg.(type) {
	case *Timer, *timeoutMsg, *continuation:
		return true
	}
	return false
}

// watchTerm is the sender of the envelope in which the runtime queues the
// Terminated of a watched actor (onTerminated) in the watcher's user
// queue. It marks the envelope as the runtime's, as isTick marks a tick:
// a full bounded mailbox does not refuse or drop it (a user's *Terminated,
// or a peer's, has another sender and is bounded like any message). It is
// never handed to Receive (invokeUser clears it) nor to a dead letter.
var watchTerm = &PID{ID: "$watchterm"}

// runtimeOwned reports whether the envelope e is the runtime's own (a
// tick, a watched actor's Terminated): a full bounded mailbox sends it
// through the system queue instead of refusing or dropping it.
func runtimeOwned(e envelope) bool { return e.sender == watchTerm || isTick(e.msg) }

// SendSystem implements Process.
func (c *cell) SendSystem(_ *PID, m SystemMessage) { c.postSystem(nil, m) }

// StopProcess implements Process.
func (c *cell) StopProcess(_ *PID) { c.postSystem(nil, stopSys) }

// postSystem queues the system message m; w is the poster's worker, or
// nil. A Stop is queued only by the first to mark the mailbox
// (mailbox.MarkStop, which beginStop marks too): once one is queued, or
// the actor is stopping, another would only wait in the queue to be
// ignored (beginStop), so any number of stops, a peer's StopRequests
// among them, hold one message while the actor is stuck in its Receive
// (TestRepeatedStopQueuesOne). The mark is never cleared: a queued Stop
// always ends the actor (a restart before it does not undo it, and one
// drained at the mailbox's close finds it stopped).
func (c *cell) postSystem(w *scheduler.Worker, m SystemMessage) {
	if _, ok := m.(*Stop); ok && !c.mb.MarkStop() {
		return
	}
	c.mb.PostSystem(w, envelope{msg: m})
}

// MailboxIndex implements scheduler.MessageInvoker.
func (c *cell) MailboxIndex() scheduler.MailboxIndex { return c.idx }

// AddMiddleware implements scheduler.MessageInvoker.
func (c *cell) AddMiddleware(m scheduler.Middleware) {
	if c.mw == nil {
		c.mw = &chains{}
	}
	if c.mw.inv == nil {
		c.mw.inv = &invokeMW{chain: scheduler.NewComposite()}
	}
	c.mw.inv.chain.Add(m)
}

// BindWorker implements scheduler.Runnable.
func (c *cell) BindWorker(w *scheduler.Worker) { c.worker = w }

// SetIdle implements scheduler.Runnable.
func (c *cell) SetIdle() bool { return c.mb.SetIdle() }

// Defer implements scheduler.Runnable.
func (c *cell) Defer() { c.mb.Defer() }

// Wake implements scheduler.Runnable.
func (c *cell) Wake() bool { return c.mb.Wake() }

// Sink implements mailbox.Sink: it takes what reaches the mailbox after the
// actor stopped.
func (c *cell) Sink(e envelope) {
	switch m := e.msg.(type) {
	case *Watch:
		c.sys.sendSystem(nil, m.Watcher, &TerminatedSystem{Terminated{Who: c.selfPID(), Why: TerminatedStopped}})
	case *stopWatchMsg:
		c.tellStopped(nil, m)
	case *watchUpdate:
		// As a Watch when it stands for one: the watcher hears of the
		// stop; the keeper's state is taken either way.
		if m.state.Take() {
			c.sys.sendSystem(nil, m.watcher, &TerminatedSystem{Terminated{Who: c.selfPID(), Why: TerminatedStopped}})
		}
	case SystemMessage, *Timer, *continuation, *timeoutMsg: // the actor's own ticks: nothing to report
	case *Terminated:
		sender := e.sender
		if sender == watchTerm {
			sender = nil
		}
		c.sys.deadLetter(c.selfPID(), m, sender, nil)
	case *PoisonPill:
		// A dead letter, but not answered: the actor has stopped, as the
		// pill asked. PoisonFuture's pill has the future as its sender for
		// a refusal of a full mailbox only (ErrMailboxFull); its Watch
		// tells it of the stop, and an answer here would beat the
		// Terminated of an actor that drains the pill as it stops
		// otherwise (TestPoisonFutureOfActorStoppedOtherwise).
		c.sys.deadLetter(c.selfPID(), m, nil, nil)
	default:
		if env, ok := e.msg.(*MessageEnvelope); ok && env != nil {
			if _, pill := env.Message.(*PoisonPill); pill {
				// A pill with headers (tracing, Forward) is still the
				// stopped actor's, as a bare one is above
				// (TestReview6EnvelopedPoisonThroughStalePIDSparesTheNewActor).
				c.sys.deadLetter(c.selfPID(), e.msg, nil, nil)
				return
			}
		}
		if c.rebind(e) {
			return
		}
		c.sys.deadLetter(c.selfPID(), e.msg, e.sender, nil)
	}
}

// rebind hands a user message that reached this stopped actor to the
// process registered under its ID now, if there is another: a new actor
// spawned under the same name. A PID value caches the actor it first
// reached, so one held across a re-spawn kept reaching the stopped actor,
// and what was sent through it became a dead letter, while a fresh PID of
// the same address and ID (and any PID from the network, resolved by ID)
// reached the new one (TestStalePIDReachesTheNamesNewActor). A PID names
// an address and an ID, as in Proto.Actor; Akka's refs are bound to one
// incarnation instead. Only user messages move: a PoisonPill, a Stop or a
// Watch meant for the stopped actor stays with it (a late Stop of a child
// that was re-spawned under its name must not stop the new one), and so
// do the actor's own ticks. The message goes on the sender's goroutine,
// before the send returns, so one sender's messages keep their order.
func (c *cell) rebind(e envelope) bool {
	p, ok := c.sys.registry.get(c.pid.ID)
	if !ok || p == Process(c) {
		return false
	}
	if q, ok := p.(*cell); ok {
		q.postUser(nil, e.msg, e.sender)
	} else {
		c.sys.sendToProcess(p, c.selfPID(), e.msg, e.sender)
	}
	return true
}

// addChild adds ch unless c is winding down: its children were stopped
// when it began, so one added later would never be stopped by it (a spawn
// racing with Shutdown, or one from a Stopped handler).
func (c *cell) addChild(ch *cell) bool {
	if g := c.kids(); g != nil {
		s := g.shard(ch)
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.wait {
			return false
		}
		s.set.add(ch)
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.childWait {
		return false
	}
	if c.children == nil {
		c.children = newChildSet()
	}
	c.children.add(ch)
	return true
}

// abandon ends c, which its spawn registered and no parent took: the
// spawner still holds its mailbox (claimed with Started queued), so
// nothing has run c and nothing will. It leaves the registry and its
// mailbox closes, on the spawner's goroutine: what found c meanwhile (a
// message, a Watch) is dead-lettered or answered as by a stopped actor
// (Sink), and so is what comes later.
func (c *cell) abandon() {
	c.state = stateStopped
	c.actor = nil
	c.mb.Close() // before it leaves the registry, as in finalize
	c.sys.registry.removeCell(c)
	c.sys.metrics.stopped(c)
}

// childOf returns the cell of pid when it is a child of c (a PID of another
// node or system never is).
func (c *cell) childOf(pid *PID) *cell {
	if pid == nil {
		return nil
	}
	if ch := pid.local.Load(); ch != nil && ch.parent == c.selfPID() {
		return ch
	}
	return nil
}

func (c *cell) removeChild(pid *PID) bool {
	return c.onChild(pid, (*childSet).remove)
}

func (c *cell) isChild(pid *PID) bool {
	return c.onChild(pid, (*childSet).contains)
}

// onChild applies op to the child of pid, under the lock of the set that
// holds it (a guardian's shard, or c.mu); false when pid is no child of c.
func (c *cell) onChild(pid *PID, op func(*childSet, *cell) bool) bool {
	ch := c.childOf(pid)
	if ch == nil {
		return false
	}
	if g := c.kids(); g != nil {
		s := g.shard(ch)
		s.mu.Lock()
		defer s.mu.Unlock()
		return op(&s.set, ch)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.children != nil && op(c.children, ch)
}

// childStopped takes a finalized child out of the set and reports whether
// c must be told: only a parent winding down (waiting for its children to
// finish its own stop or restart) needs the Terminated message. A child
// stopping under a live parent costs the parent no message and no
// invocation.
func (c *cell) childStopped(ch *cell) (notify bool) {
	if g := c.kids(); g != nil {
		s := g.shard(ch)
		s.mu.Lock()
		s.set.remove(ch)
		notify = s.wait
		s.mu.Unlock()
		return notify
	}
	c.mu.Lock()
	if c.children != nil {
		c.children.remove(ch)
	}
	notify = c.childWait
	c.mu.Unlock()
	return notify
}

// setChildWait marks whether c is waiting for its children to stop.
func (c *cell) setChildWait(v bool) {
	if g := c.kids(); g != nil {
		g.windDown(v)
		return
	}
	c.mu.Lock()
	c.childWait = v
	c.mu.Unlock()
}

func (c *cell) childCount() int {
	if g := c.kids(); g != nil {
		return g.count()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.children == nil {
		return 0
	}
	return c.children.live
}

func indexPID(list []*PID, p *PID) int {
	for i, q := range list {
		if q.Equal(p) {
			return i
		}
	}
	return -1
}

func removePID(list []*PID, p *PID) ([]*PID, bool) {
	i := indexPID(list, p)
	if i < 0 {
		return list, false
	}
	last := len(list) - 1
	list[i] = list[last]
	list[last] = nil
	return list[:last], true
}
