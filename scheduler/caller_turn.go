package scheduler

import "sync/atomic"

// Caller turns. A goroutine outside the pool that posts a request to an
// idle mailbox and then blocks until the answer comes (the root context's
// Request) would wake a worker, hand it the mailbox, park itself and be
// woken again by the answer: two goroutine hand-offs for a turn that the
// caller, which has nothing else to do, can run itself. A caller turn is
// that: the caller claims the mailbox's scheduled status without handing
// it to the pool (the mailbox's PostUserClaim) and, when BeginCallerTurn
// allows it, runs the turn on its own goroutine with RunCallerTurn.
//
// It is allowed only when no worker of any pool in the process is running
// and no other caller turn is: active below counts both. So a caller turn
// does not take a core from a worker that has work (the pool's parallelism
// holds; a worker being woken counts from the moment it runs, so for that
// instant the two may overlap, which costs nothing but the overlap: the
// mailbox claim, not this count, keeps a turn on one goroutine), and never
// starts inside another one (the turn in progress counts as active,
// whatever system or pool the nested request goes to), so the stack holds
// at most one. The count is process-wide for that last reason: a turn does
// not know which goroutine it runs on.
//
// A caller turn is one invocation that handles one user message (the
// caller's own; RunCallerTurn's hint is 1) and the system messages
// queued; what is left after it (a yield, work that arrived meanwhile)
// goes to the pool. Messages the actor sends during it are scheduled on
// the pool (its worker is nil, so nothing runs next on the caller).
// Shutdown waits for caller turns in progress as it does for workers, and
// counts them as work still running when its context ends. It counts them
// with turns alone, not one WaitGroup count per turn, which would cost a
// turn a second atomic add each way: Shutdown adds turnsClosed to turns
// (no turn begins after that), and whoever brings it down to exactly
// turnsClosed, Shutdown itself or the last turn to end, releases the one
// WaitGroup count that stands for them all.
//
// TestCallerTurn* (scheduler) and TestRequestCallerTurn* (actor) pin it.

// active is the number of workers, of every Coordinator in the process,
// that are running (started or woken, and not parked again), plus the
// caller turns in progress. Workers change it themselves; a caller turn
// takes it from zero with a compare-and-swap.
var active atomic.Int64

// turnsClosed is what Shutdown adds to Coordinator.turns: more than any
// number of turns in progress, so that turns == turnsClosed means closed
// with none left.
const turnsClosed = 1 << 40

// BeginCallerTurn reports whether the calling goroutine may run a turn of
// one of this pool's runnables itself; when it returns true, the caller
// must call EndCallerTurn once, after RunCallerTurn or instead of it. It
// returns false while any worker of any pool in the process is active or
// another caller turn is in progress, and before Start or after Shutdown.
// It never blocks. It is meant for a caller that would otherwise block
// waiting for the turn's outcome.
func (c *Coordinator) BeginCallerTurn() bool {
	if active.Load() != 0 || !active.CompareAndSwap(0, 1) { // the load keeps a busy pool's cache line shared
		return false
	}
	c.mu.Lock()
	if c.closed || !c.started {
		c.mu.Unlock()
		active.Add(-1)
		return false
	}
	c.turns.Add(1) // under mu while not closed: before Shutdown adds turnsClosed
	c.mu.Unlock()
	return true
}

// CallerTurnAllowed reports whether BeginCallerTurn would succeed now as
// far as the process's workers are concerned (none is active, no caller
// turn runs); it changes no state, so the answer may be stale at once.
func (c *Coordinator) CallerTurnAllowed() bool { return active.Load() == 0 }

// RunCallerTurn runs one invocation of r on the calling goroutine, between
// BeginCallerTurn and EndCallerTurn. The caller must have claimed r's
// scheduled status (r is in no ready queue and no worker runs it). After
// the invocation r is settled as a worker settles it; if it has more to do
// it is handed to the pool.
//
// The invocation handles one user message (and the system messages
// queued): the caller's own, which its post or its request's deferred
// claim put first (actor's sendAndRun, sendDeferred). What others send
// meanwhile goes to the pool: run on the caller, a message of someone
// else's that blocks held the caller past its own deadline, its answer
// long given (actor's TestNewuser9ResultTimeoutNotHeldByAnotherRequestsMessage).
func (c *Coordinator) RunCallerTurn(r Runnable) {
	r.BindWorker(nil)
	res := r.InvokeBatch(1)
	if settle(r, res, c.cfg.Clock, c.resumeF, c.cfg.OnFailed, &c.timers) == actRequeue {
		c.Schedule(r)
	}
}

// EndCallerTurn ends what BeginCallerTurn began.
func (c *Coordinator) EndCallerTurn() {
	active.Add(-1)
	if c.turns.Add(-1) == turnsClosed { // the last turn Shutdown waits for
		c.wg.Done()
	}
}
