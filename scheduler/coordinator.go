package scheduler

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/internal/await"
)

// Config configures a Coordinator.
type Config struct {
	// Name labels the pool in diagnostics.
	Name string
	// Workers is the size of the worker pool; 0 means GOMAXPROCS, values
	// above MaxWorkersCap mean MaxWorkersCap.
	Workers int
	// Throughput is the throughput hint handed to InvokeBatch: the most user
	// messages one invocation processes before it yields. 0 means 300.
	Throughput int
	// MaxBatch is the most runnables a worker takes from the ready queue in
	// one cycle (S9). 0 means 32; values above MaxBatchCap mean MaxBatchCap.
	// What a worker has taken waits for it, not for the other workers, so
	// a pool whose invocations may block must set 1: the rest of a batch
	// waits behind an invocation that blocks while the other workers park
	// (actor's TestBlockingPoolDoesNotHoldQueuedActorsBehindABlockedOne).
	MaxBatch int
	// Clock drives resume timers; nil means the system clock.
	Clock Clock
	// OnFailed observes Failed results; may be nil.
	OnFailed FailureHook
	// DisableRunNext sends runnables scheduled from inside an invocation to
	// the shared queue like any other. A pool whose invocations may block
	// (a pool for blocking actors) must set it: a runnable in the run-next
	// slot runs only after the invocation that scheduled it, so one that
	// this invocation blocks waiting for (a request's target) waits for
	// ever, or for the request's timeout, while the other workers park
	// (actor's TestBlockingActorRequestToBlockingActor). A pool whose
	// invocations never block leaves it off, which saves a wake-up per
	// actor-to-actor message (see docs/benchmarks.md).
	DisableRunNext bool
	// OnStarved is told, once per episode and on a timer's goroutine, when
	// the ready queue has not moved for StarvedAfter while it held
	// runnables (every worker stayed in an invocation: see Starved); nil
	// turns the watch off.
	OnStarved func(Starved)
	// StarvedAfter is how long the queue must stand still; 0 means
	// DefaultStarvedAfter, and it is at least MinStarvedAfter.
	StarvedAfter time.Duration
}

// DefaultThroughput is the throughput hint when Config leaves it zero.
const DefaultThroughput = 300

// MaxBatchCap caps Config.MaxBatch. Each worker preallocates its local
// batch, so an unbounded MaxBatch made NewCoordinator panic (makeslice) or
// reserve memory for nothing, and a worker shifts its local batch on every
// take, so a huge one costs time on each (TestCoordinatorHugeMaxBatch).
const MaxBatchCap = 1024

// MaxWorkersCap caps Config.Workers. NewCoordinator allocates each worker's
// structures up front, so an unbounded value exhausted memory instead of
// failing (TestCoordinatorHugeWorkers); actor.SystemConfig refuses values
// above it.
const MaxWorkersCap = 1 << 16

func (c Config) withDefaults() Config {
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	c.Workers = min(c.Workers, MaxWorkersCap)
	if c.Throughput <= 0 {
		c.Throughput = DefaultThroughput
	}
	if c.MaxBatch <= 0 {
		c.MaxBatch = 32
	}
	c.MaxBatch = min(c.MaxBatch, MaxBatchCap)
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.StarvedAfter <= 0 {
		c.StarvedAfter = DefaultStarvedAfter
	}
	c.StarvedAfter = max(c.StarvedAfter, MinStarvedAfter)
	return c
}

// maxStreak bounds how many runnables in a row a worker takes from its
// run-next slot while others wait in the ready queue, so that a ping-pong
// pair cannot starve the rest.
const maxStreak = 64

// Coordinator is the ready-queue scheduler: a FIFO of runnable mailboxes and a
// fixed pool of workers that drain it. Idle workers park and a schedule wakes
// one; there is no goroutine per message or per actor.
type Coordinator struct {
	cfg     Config
	mu      sync.Mutex
	queue   ring
	queued  atomic.Int64 // len(queue), readable without the lock
	idle    []*Worker
	idleN   atomic.Int32 // len(idle), readable without the lock (WakeIdle)
	workers []*Worker
	closed  bool
	started bool
	exited  int          // workers that have run their last runnable (under mu); see Shutdown
	turns   atomic.Int64 // caller turns in progress, plus turnsClosed from Shutdown on (caller_turn.go)
	done    chan struct{}
	wg      sync.WaitGroup
	timers  TimerSet
	parked  atomic.Int32
	resumeF func(Runnable) // c.Schedule, bound once: a method value allocates

	// The starvation watch (starvation.go), under mu.
	taken         uint64 // runnables taken from the queue, ever
	watching      bool   // the watch's timer is set
	watchProgress uint64 // progressLocked at the watch's last look
	starvedFor    time.Duration
	reported      bool // this episode was reported
	checkStarvedF func()
}

// Worker is one goroutine of a Coordinator's pool. Runnables learn the worker
// that runs them through Runnable.BindWorker and hand it back in
// Dispatcher.ScheduleFrom.
type Worker struct {
	c      *Coordinator
	id     int
	next   Runnable // run-next slot: written only by this worker's goroutine
	streak int
	wake   chan struct{}
	quit   bool // set by Shutdown (under mu) before it wakes the parked worker to exit
	local  []Runnable
	// batchRan counts the runnables this worker started from its local
	// batch: progress the starvation watch sees beside the takes from the
	// queue (a worker working through a batch takes nothing from the
	// queue meanwhile). Written by this worker only; read by the watch.
	batchRan atomic.Uint64
}

// ID returns the worker's index in its pool.
func (w *Worker) ID() int { return w.id }

// NewCoordinator creates a coordinator; Start launches its workers.
func NewCoordinator(cfg Config) *Coordinator {
	cfg = cfg.withDefaults()
	c := &Coordinator{cfg: cfg, done: make(chan struct{})}
	c.resumeF = c.Schedule
	c.checkStarvedF = c.checkStarved
	for i := range cfg.Workers {
		c.workers = append(c.workers, &Worker{c: c, id: i, wake: make(chan struct{}, 1), local: make([]Runnable, 0, cfg.MaxBatch)})
	}
	return c
}

// Config returns the effective configuration.
func (c *Coordinator) Config() Config { return c.cfg }

// Clock returns the coordinator's clock.
func (c *Coordinator) Clock() Clock { return c.cfg.Clock }

// Start launches the worker goroutines. It is idempotent.
func (c *Coordinator) Start() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started || c.closed {
		return
	}
	c.started = true
	active.Add(int64(len(c.workers))) // each counts until it parks
	for _, w := range c.workers {
		c.wg.Go(w.loop)
	}
}

// Schedule implements Dispatcher. After Shutdown, r still runs while a
// worker is running (see Shutdown); once every worker has exited, Schedule
// drops r.
func (c *Coordinator) Schedule(r Runnable) {
	c.mu.Lock()
	if c.closed && c.exited == len(c.workers) {
		c.mu.Unlock()
		return
	}
	c.queue.push(r)
	c.queued.Add(1)
	var w *Worker
	watch := false
	if n := len(c.idle); n > 0 {
		w = c.idle[n-1]
		c.idle = c.idle[:n-1]
		c.idleN.Add(-1)
	} else {
		watch = c.armStarvedLocked()
	}
	c.mu.Unlock()
	if w != nil {
		w.wake <- struct{}{}
	}
	if watch {
		c.startStarvedWatch()
	}
}

// ScheduleFrom implements Dispatcher: when w is one of this pool's workers,
// r goes to w's run-next slot and runs as soon as w's current invocation
// ends, without waking another worker. A runnable already in the slot moves
// to the ready queue.
func (c *Coordinator) ScheduleFrom(w *Worker, r Runnable) {
	if w == nil || w.c != c || c.cfg.DisableRunNext {
		c.Schedule(r)
		return
	}
	if prev := w.next; prev != nil {
		c.Schedule(prev)
	}
	w.next = r
}

// Release hands what w holds for later, its run-next slot and its local
// batch, to the ready queue: the invocation running on w may block next
// until another actor has run (a request made from inside a Receive,
// waiting for its answer). Nothing else takes those runnables (the slot
// and the batch are private to w, so that an ordinary hop costs no
// synchronization), and the actor the invocation would wait for is
// typically among them: the request itself scheduled it into the slot.
// Before, such a wait lasted until the request's timeout even with every
// other worker idle (TestCoordinatorReleaseHandsHeldWorkToIdleWorkers; in
// actor, TestRequestFromReceiveDoesNotStrandTheTarget).
//
// It wakes no parked worker: an invocation that does not block after all
// (the request's answer awaited with a continuation) lets w take them back
// from the queue as soon as it ends, where a wake would move them to
// another core. The code that blocks calls WakeIdle first. It costs
// nothing when w holds nothing, one lock otherwise; the per-hop path is
// unchanged.
//
// Call it only from the invocation running on w, on w's goroutine, as
// ScheduleFrom. A nil w (a caller turn, another dispatcher) is a no-op.
func (w *Worker) Release() {
	if w == nil || (w.next == nil && len(w.local) == 0) {
		return
	}
	c := w.c
	c.mu.Lock()
	n := 0
	if w.next != nil {
		c.queue.push(w.next)
		w.next = nil
		n++
	}
	for i, r := range w.local {
		c.queue.push(r)
		w.local[i] = nil
		n++
	}
	w.local = w.local[:0]
	w.streak = 0
	c.queued.Add(int64(n))
	watch := c.armStarvedLocked()
	c.mu.Unlock()
	if watch {
		c.startStarvedWatch()
	}
}

// WakeIdle wakes a parked worker when the ready queue holds more runnables
// than the workers already woken for it: the caller is about to block
// (a request's waiter), possibly on a worker whose invocation handed its
// runnables over without waking anyone (Release). Any goroutine may call
// it. Its common case, nothing to wake, is three atomic loads and no lock.
func (c *Coordinator) WakeIdle() {
	if c == nil {
		return
	}
	idle := c.idleN.Load()
	if idle == 0 || c.queued.Load() <= int64(c.parked.Load()-idle) {
		return
	}
	c.mu.Lock()
	w := c.idleForQueuedLocked()
	c.mu.Unlock()
	if w != nil {
		w.wake <- struct{}{}
	}
}

// idleForQueuedLocked pops a parked worker for the caller to wake when the
// ready queue holds more runnables than the workers already woken for it,
// or returns nil. Woken workers have left idle but are counted in parked
// until they run. With mu.
func (c *Coordinator) idleForQueuedLocked() *Worker {
	n := len(c.idle)
	if n == 0 || c.queue.len() <= int(c.parked.Load())-n {
		return nil
	}
	w := c.idle[n-1]
	c.idle = c.idle[:n-1]
	c.idleN.Add(-1)
	return w
}

// Parked returns the number of parked workers.
func (c *Coordinator) Parked() int { return int(c.parked.Load()) }

// Workers returns the size of the pool.
func (c *Coordinator) Workers() int { return len(c.workers) }

// Queued returns the number of runnables in the ready queue.
func (c *Coordinator) Queued() int { return int(c.queued.Load()) }

// PendingTimers returns the number of timers not yet fired: resume timers,
// and the starvation watch's while it is armed.
func (c *Coordinator) PendingTimers() int { return c.timers.Len() }

// Shutdown lets the workers finish what is queued and waits for their
// goroutines to return, or for ctx. It stops pending resume timers. It is
// idempotent.
//
// Parked workers exit at once. A worker still running a runnable (an
// actor whose Stopped blocks) runs, before it exits, whatever is queued
// and whatever it schedules meanwhile: that is the rest of the work it was
// doing (a stopping actor's notice to its parent), and dropping it would
// leave that work half done for good. Once every worker has exited,
// Schedule drops what it is given.
//
// It returns ctx.Err() only when ctx ends while work still runs: a worker
// that has not run its last runnable, or a caller turn. Workers that have
// (parked ones included) only have to return, which they do without
// running anything; they are not reported, even with a ctx that had
// already ended (TestCoordinatorShutdownEndedCtxReportsOnlyUnfinished).
func (c *Coordinator) Shutdown(ctx context.Context) error {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		if !c.started {
			c.exited = len(c.workers)
			c.turns.Add(turnsClosed) // none began
			close(c.done)
		} else {
			// One count in wg for the caller turns in progress, taken
			// before the mark so that the last turn's Done cannot come
			// first; whoever brings turns to turnsClosed (this call when
			// none runs, else the last EndCallerTurn) gives it back.
			c.wg.Add(1)
			if c.turns.Add(turnsClosed) == turnsClosed {
				c.wg.Done()
			}
			go func() { c.wg.Wait(); close(c.done) }() //nolint: tracked by done
		}
		// A parked worker exits without looking at the queue, so it is
		// done here: what the queue holds has woken a worker that is
		// not parked (Schedule pops one per push), and that one runs it.
		for _, w := range c.idle {
			w.quit = true
			c.exited++
			w.wake <- struct{}{}
		}
		c.idle = nil
		c.idleN.Store(0)
	}
	c.mu.Unlock()
	c.timers.Close()
	if err := await.Done(ctx, c.done); err != nil && !c.finished() {
		return err
	}
	return nil
}

// finished reports whether no more work runs on the pool: every worker has
// run its last runnable and no caller turn is in progress.
func (c *Coordinator) finished() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.exited == len(c.workers) && c.turns.Load() == turnsClosed
}

func (w *Worker) loop() {
	for {
		r := w.take()
		if r == nil {
			if !w.park() {
				return
			}
			continue
		}
		w.run(r)
	}
}

// take returns the next runnable: the run-next slot first (bounded by
// maxStreak while others wait), then the local batch, then a fresh batch from
// the ready queue.
//
// "Others wait" counts this worker's local batch as well as the ready queue:
// the local batch is invisible to every other worker, so a ping-pong pair
// that kept the slot while only the queue was checked held what this
// worker had taken back for as long as the pair ran
// (TestCoordinatorRunNextDoesNotStarveLocalBatch).
func (w *Worker) take() Runnable {
	c := w.c
	if r := w.next; r != nil {
		if w.streak < maxStreak || (len(w.local) == 0 && c.queued.Load() == 0) {
			w.next = nil
			w.streak++
			return r
		}
		w.next = nil
		c.Schedule(r)
	}
	w.streak = 0
	if n := len(w.local); n > 0 {
		r := w.local[0]
		copy(w.local, w.local[1:])
		w.local[n-1] = nil
		w.local = w.local[:n-1]
		w.batchRan.Add(1)
		return r
	}
	if c.queued.Load() == 0 {
		return nil
	}
	c.mu.Lock()
	// Take a fair share so that other workers find work too.
	n := min(c.cfg.MaxBatch, (c.queue.len()+len(c.workers)-1)/len(c.workers))
	var first Runnable
	for i := 0; i < n; i++ {
		r := c.queue.pop()
		if first == nil {
			first = r
		} else {
			w.local = append(w.local, r)
		}
	}
	c.queued.Add(int64(-n))
	c.taken += uint64(n)
	c.mu.Unlock()
	return first
}

// park blocks until a schedule wakes the worker; false means shut down.
func (w *Worker) park() bool {
	c := w.c
	c.mu.Lock()
	if c.queue.len() > 0 {
		c.mu.Unlock()
		return true
	}
	if c.closed {
		c.exited++
		c.mu.Unlock()
		active.Add(-1)
		return false
	}
	c.idle = append(c.idle, w)
	c.idleN.Add(1)
	c.parked.Add(1)
	active.Add(-1)
	c.mu.Unlock()
	<-w.wake
	if w.quit { // written before the wake was sent
		c.parked.Add(-1)
		return false
	}
	// Counted here, on the worker's own core, not by the goroutine that
	// woke it: a producer outside the pool then touches neither counter.
	c.parked.Add(-1)
	active.Add(1)
	return true
}

func (w *Worker) run(r Runnable) {
	c := w.c
	for {
		r.BindWorker(w)
		res := r.InvokeBatch(c.cfg.Throughput)
		if settle(r, res, c.cfg.Clock, c.resumeF, c.cfg.OnFailed, &c.timers) != actRequeue {
			return
		}
		// Run it again at once only when nobody else is waiting.
		if w.next != nil || len(w.local) > 0 || c.queued.Load() > 0 {
			c.Schedule(r)
			return
		}
	}
}
