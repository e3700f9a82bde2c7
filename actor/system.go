package actor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/fraktor-go/fraktor/extension"
	"github.com/fraktor-go/fraktor/internal/await"
	"github.com/fraktor-go/fraktor/mailbox"
	"github.com/fraktor-go/fraktor/scheduler"
)

// SystemConfig configures an actor system. The zero value of every field
// has a sensible default; Validate reports what cannot work.
type SystemConfig struct {
	// Name names the system (for logs and remote handshakes). Default "fraktor".
	Name string
	// Workers is the size of the shared worker pool; 0 means GOMAXPROCS.
	// At most MaxWorkers.
	Workers int
	// Throughput is the most user messages an actor handles before it
	// yields its worker; 0 means scheduler.DefaultThroughput.
	Throughput int
	// DisableRunNext turns off the run-next slot of the worker pool (for
	// measurement only; see scheduler.Config.DisableRunNext).
	DisableRunNext bool
	// BlockingWorkers is the size of the dedicated pool for actors spawned
	// WithBlocking; 0 means 16. Its workers start on first use. At most
	// MaxWorkers.
	BlockingWorkers int
	// Dispatcher replaces the system's own worker pool (for example the
	// testkit's manual executor). The system does not start or stop it.
	Dispatcher scheduler.Dispatcher
	// Clock drives timers (receive timeouts, future timeouts, backoff);
	// nil means the system clock.
	Clock scheduler.Clock
	// Logger receives lifecycle records at Debug and operator-relevant
	// records at Info and above. Nil means no logging at all.
	Logger *slog.Logger
	// MeterProvider receives the system's OpenTelemetry instruments; nil
	// means a no-op provider. No global provider is used.
	MeterProvider metric.MeterProvider
	// KindMiddleware, when set, makes the scheduler middleware of each
	// actor kind (see WithKind): it is called once per kind, the first time
	// an actor of the kind is spawned, with the kind, the system's
	// MeterProvider (a no-op one when none is set) and Clock, on the
	// spawning goroutine. The middleware it returns (nil for none) runs
	// around every invocation of every actor of that kind, before the
	// actor's own invoke middleware, so it must be safe for concurrent use.
	// A panic in it is logged and the kind gets no middleware. With it set,
	// the fraktor.mailbox.length gauge is kept up to date.
	// middleware.KindTelemetry records the per-batch invoke metrics by kind.
	KindMiddleware func(kind string, mp metric.MeterProvider, clock scheduler.Clock) scheduler.Middleware
	// SpawnMiddleware wraps every spawn of a user actor, from the
	// RootContext and from actors' Contexts (see SpawnMiddleware); it is
	// the outermost part of every actor's spawn chain.
	SpawnMiddleware []SpawnMiddleware
	// GuardianStrategy supervises top-level actors; nil means DefaultStrategy().
	GuardianStrategy SupervisorStrategy
	// EventBuffer is each EventStream subscription's buffer; 0 means 1024.
	// At most MaxEventBuffer.
	EventBuffer int
	// DeadLetterLogInterval throttles dead-letter logging; 0 means 1 s.
	DeadLetterLogInterval time.Duration
	// StarvationWarning is how long a worker pool's ready queue may stand
	// still, actors waiting in it while every worker stays in one
	// invocation, before the system logs a warning and publishes
	// PoolStarved; 0 means scheduler.DefaultStarvedAfter (1 s) with the
	// system clock and off with any other Clock (a virtual clock measures
	// no wall time), a negative value turns the watch off. It costs no
	// timer while the pools keep up.
	StarvationWarning time.Duration
	// Extensions are installed by NewSystem, in dependency order.
	Extensions []ExtensionInstaller
	// DeterministicIDs numbers generated actor IDs ("$1", "#5/$3") from 1,
	// so that every fresh system names its actors alike and traces compare
	// across runs; the testkit's manual systems set it. Unset, they start
	// at a random base (idSeqBase), so that a node restarted at the same
	// address does not hand its predecessor's IDs to new actors, which a
	// stale PID held by a peer would then reach. Set it only where no
	// earlier incarnation's PIDs can arrive.
	DeterministicIDs bool
}

// Validate reports configuration errors; they wrap ErrInvalidConfig.
func (c SystemConfig) Validate() error {
	var errs []error
	if c.Workers < 0 || c.Workers > MaxWorkers {
		errs = append(errs, fmt.Errorf("field Workers must be between 0 and %d, got %d", MaxWorkers, c.Workers))
	}
	if c.Throughput < 0 {
		errs = append(errs, fmt.Errorf("field Throughput must be ≥ 0, got %d", c.Throughput))
	}
	if c.BlockingWorkers < 0 || c.BlockingWorkers > MaxWorkers {
		errs = append(errs, fmt.Errorf("field BlockingWorkers must be between 0 and %d, got %d", MaxWorkers, c.BlockingWorkers))
	}
	if c.EventBuffer < 0 || c.EventBuffer > MaxEventBuffer {
		errs = append(errs, fmt.Errorf("field EventBuffer must be between 0 and %d, got %d", MaxEventBuffer, c.EventBuffer))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrInvalidConfig, errors.Join(errs...))
	}
	return nil
}

// Bounds of SystemConfig: a pool's workers and a subscription's buffer are
// allocated up front (goroutines and their structures; a channel per
// subscriber), so a value past them is refused by Validate instead of
// exhausting memory or panicking in the allocation.
const (
	MaxWorkers     = scheduler.MaxWorkersCap
	MaxEventBuffer = 1 << 20
)

// System is an actor system: its worker pool, its process registry, its
// guardians, its EventStream and its extensions.
type System struct {
	cfg        SystemConfig
	name       string
	address    atomic.Pointer[string]
	registry   *registry
	dispatcher scheduler.Dispatcher
	coord      *scheduler.Coordinator // owned pool, nil with an external dispatcher
	blockingMu sync.Mutex
	blocking   *scheduler.Coordinator
	clock      scheduler.Clock
	realClock  bool          // clock is the system clock (future_deferred.go)
	sweep      timerNode     // hands a deferred turn to the pool after deferGrace
	deferGrace time.Duration // deferredTurnGrace; tests lengthen it (future_deferred.go)
	// The deferred slot sits on a cache line of its own: every operation of
	// the root context reads it, and the timer goroutine writes sweep.
	_           [64]byte
	deferred    atomic.Pointer[cell]   // the actor whose turn waits for its caller (future_deferred.go)
	deferredFor atomic.Pointer[Future] // the future whose waiter may run that turn (runTurn)
	sweepArmed  atomic.Bool            // sweep is armed or firing
	_           [64 - 8 - 8 - 4]byte
	logger      *slog.Logger
	metrics     *metrics
	events      *EventStream
	deadLetters *deadLetters
	timers      scheduler.TimerSet
	tq          *timerQueue // actor timers and request timeouts
	root        *RootContext

	rootGuardian, userGuardian, systemGuardian *cell
	guardianKids                               [3]guardianKids // root, user, system: see cell.kids
	guardiansDone                              chan struct{}   // closed when the root guardian has stopped
	poolsLate                                  atomic.Int32    // see closePoolsLate
	userDone                                   chan struct{}   // closed when the user guardian has stopped
	systemDone                                 chan struct{}   // closed when the system guardian has stopped

	idSeq, futureSeq, mailboxSeq atomic.Uint64
	registerFutures              atomic.Bool
	signals                      sync.Pool // chan struct{} (cap 1): future_signal.go
	remote                       atomic.Pointer[RemoteHandler]
	redirects                    atomic.Pointer[[]redirect] // Host.SetRedirect; copied on write under redirectMu
	redirectMu                   sync.Mutex
	stopped                      atomic.Bool
	shutdownOnce                 sync.Once
	shutdownDone                 chan struct{}
	shutdownErr                  error
	term                         termination // Terminated (shutdown_terminated.go)
	exts                         *extension.Registry[Host]
	// timeoutCause says why a request to another address timed out
	// (Host.SetTimeoutCause; Future.timeoutError).
	timeoutCause atomic.Pointer[func(address string) error]
}

// NewSystem starts an actor system and installs its extensions. On an error
// nothing is left running.
func NewSystem(cfg SystemConfig) (*System, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Name == "" {
		cfg.Name = "fraktor"
	}
	if cfg.BlockingWorkers == 0 {
		cfg.BlockingWorkers = 16
	}
	var idBase uint64
	if !cfg.DeterministicIDs {
		idBase = idSeqBase()
	}
	s := &System{cfg: cfg, name: cfg.Name, registry: newRegistry(idBase), shutdownDone: make(chan struct{})}
	s.term.init()
	s.idSeq.Store(idBase)
	s.futureSeq.Store(futureSeqBase())
	s.deferGrace = deferredTurnGrace
	addr := LocalAddress
	s.address.Store(&addr)
	s.clock = cfg.Clock
	if s.clock == nil {
		s.clock = scheduler.SystemClock{}
	}
	if _, ok := s.clock.(scheduler.SystemClock); ok {
		s.realClock = true
	}
	s.tq = newTimerQueue(s.clock)
	s.sweep.target = (*deferSweep)(s)
	s.logger = cfg.Logger
	if s.logger == nil {
		s.logger = slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelError + 100}))
	}
	s.events = newEventStream(cfg.EventBuffer, s.logger)
	s.deadLetters = newDeadLetters(s, cfg.DeadLetterLogInterval)
	m, err := newMetrics(cfg.MeterProvider, s)
	if err != nil {
		return nil, fmt.Errorf("actor: metrics: %w", err)
	}
	s.metrics = m
	if cfg.Dispatcher != nil {
		s.dispatcher = cfg.Dispatcher
	} else {
		s.coord = scheduler.NewCoordinator(scheduler.Config{Name: s.name, Workers: cfg.Workers, Throughput: cfg.Throughput, Clock: s.clock, DisableRunNext: cfg.DisableRunNext,
			OnStarved: s.starvedHook(), StarvedAfter: cfg.StarvationWarning})
		s.coord.Start()
		s.dispatcher = s.coord
	}
	s.root = &RootContext{sys: s}
	s.startGuardians()
	s.exts = s.newExtensionRegistry()
	if err := s.installExtensions(context.Background()); err != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		return nil, err
	}
	s.logger.Debug("actor system started", "name", s.name, "address", s.Address())
	return s, nil
}

// Name returns the system's name.
func (s *System) Name() string { return s.name }

// Address returns the address of local PIDs: LocalAddress, or the remote
// transport's advertised address once remote is installed.
func (s *System) Address() string { return *s.address.Load() }

// Root returns the context for code outside actors.
func (s *System) Root() *RootContext { return s.root }

// EventStream returns the system's event bus.
func (s *System) EventStream() *EventStream { return s.events }

// Logger returns the system's logger.
func (s *System) Logger() *slog.Logger { return s.logger }

// Clock returns the system's clock.
func (s *System) Clock() scheduler.Clock { return s.clock }

// Dispatcher returns the system's shared dispatcher.
func (s *System) Dispatcher() scheduler.Dispatcher { return s.dispatcher }

// ProcessCount returns the number of registered local processes. A name
// reserved by a spawn in progress (from before its Props' producer runs
// until its actor is registered) counts as one: the count may be one
// higher per named spawn in progress than the processes reachable by ID.
func (s *System) ProcessCount() int { return s.registry.len() }

// Stopped reports whether Shutdown has begun.
func (s *System) Stopped() bool { return s.stopped.Load() }

func (s *System) startGuardians() {
	s.guardiansDone = make(chan struct{})
	s.rootGuardian = s.newCell(nil, PropsFromFunc(func(Context) {}, WithSupervisor(stopOnFailure{}), WithKind("guardian")), "root")
	s.rootGuardian.ext().onStopped = func() {
		// Passed before guardiansDone closes: a Shutdown that finds it
		// closed then finds this side of the gate passed (terminateWhenDone).
		last := s.term.gate.Add(1) == 2
		close(s.guardiansDone)
		if s.poolsLate.Swap(poolsRootStopped) == poolsCloseLate {
			s.closePools(doneCtx)
		}
		if last {
			// On a worker, which must not wait for its own pool.
			go s.terminate() //nolint: tracked by Terminated
		}
	}
	gs := s.cfg.GuardianStrategy
	if gs == nil {
		gs = DefaultStrategy()
	}
	s.userGuardian = s.newCell(s.rootGuardian, PropsFromFunc(func(Context) {}, WithSupervisor(gs), WithKind("guardian")), "user")
	s.systemGuardian = s.newCell(s.rootGuardian, PropsFromFunc(func(Context) {}, WithSupervisor(DefaultStrategy()), WithKind("guardian")), "system")
	// The root guardian's children: it supervises them (a failed guardian
	// is stopped) and its stop, the last step of Shutdown, stops the
	// system guardian's tree and waits for it.
	s.rootGuardian.addChild(s.userGuardian)
	s.rootGuardian.addChild(s.systemGuardian)
	// Set here, not by Shutdown: the user guardian may stop before it (a
	// failure its root stopped), and Shutdown must then find it done.
	s.userDone = make(chan struct{})
	s.userGuardian.ext().onStopped = func() { close(s.userDone) }
	s.systemDone = make(chan struct{})
	s.systemGuardian.ext().onStopped = func() { close(s.systemDone) }
	if len(s.cfg.SpawnMiddleware) > 0 {
		if s.userGuardian.mw == nil {
			s.userGuardian.mw = &chains{}
		}
		s.userGuardian.mw.spawn = s.cfg.SpawnMiddleware
	}
}

// stopOnFailure is the root guardian's strategy: a failed guardian is stopped.
type stopOnFailure struct{}

func (stopOnFailure) HandleFailure(sup Supervisor, f Failure) {
	sup.StopChildren(f.Child)
}

// newCell creates a cell under id (initCell). parent nil makes a root.
func (s *System) newCell(parent *cell, props *Props, id string) *cell {
	c := &cell{sys: s, props: props, childSlot: -1}
	c.pid.ID = id
	s.initCell(c, parent)
	return c
}

// initCell sets up c, allocated with its system, Props and ID: its
// mailbox, attached to its dispatcher, and its actor, made by the Props'
// producer.
func (s *System) initCell(c *cell, parent *cell) {
	props := c.props
	c.idx = scheduler.MailboxIndex(s.mailboxSeq.Add(1))
	var q mailbox.Queue[envelope]
	if nq := props.o().newQueue; nq != nil {
		q = nq()
	}
	var onDrop func(envelope)
	if q != nil {
		onDrop = func(e envelope) {
			if runtimeOwned(e) {
				c.mb.PostSystem(nil, e) // see postTick, onTerminated
				return
			}
			s.deadLetter(c.selfPID(), e.msg, e.sender, ErrMailboxFull)
		}
	}
	c.mb.Init(q, onDrop)
	c.pid.Address = s.Address()
	c.pid.local.Store(c)
	if parent != nil {
		c.parent = parent.selfPID()
		c.inheritSpawnMW(parent)
	}
	c.actor = props.newActor()
	if km := props.km.Load(); km != nil && km.owner == s.metrics {
		c.km = km
	} else {
		c.km = s.metrics.kind(kindOf(props, c.actor))
		if _, failed := c.actor.(*startFailure); !failed { // not the kind of the Props' next actors
			props.km.Store(c.km)
		}
	}
	if c.km.mw != nil {
		c.AddMiddleware(c.km.mw)
	}
	for _, f := range props.o().invokeMW {
		c.AddMiddleware(newInvokeMW(f))
	}
	c.mb.Attach(s.dispatcherFor(props), c)
}

func (s *System) dispatcherFor(p *Props) scheduler.Dispatcher {
	o := p.o()
	switch {
	case o.dispatcher != nil:
		return o.dispatcher
	case o.blocking && s.coord != nil:
		s.blockingMu.Lock()
		defer s.blockingMu.Unlock()
		if s.blocking == nil && s.stopped.Load() {
			// Shutdown has begun and may have looked for the pool already:
			// one started now would outlive the system. An actor whose
			// spawn raced with Shutdown runs on the shared pool
			// (TestNoBlockingPoolAfterShutdownBegan).
			return s.dispatcher
		}
		if s.blocking == nil {
			// Its invocations may block: no run-next slot (a target the
			// invocation waits for would wait behind it) and one runnable
			// per take (the rest of a batch would wait behind a blocked
			// invocation while other workers park).
			s.blocking = scheduler.NewCoordinator(scheduler.Config{Name: s.name + "-blocking", Workers: s.cfg.BlockingWorkers, Throughput: s.cfg.Throughput, Clock: s.clock,
				OnStarved: s.starvedHook(), StarvedAfter: s.cfg.StarvationWarning,
				DisableRunNext: true, MaxBatch: 1})
			s.blocking.Start()
		}
		return s.blocking
	}
	return s.dispatcher
}

// spawn creates a child of parent. name "" generates one (with prefix).
func (s *System) spawn(parent *cell, w *scheduler.Worker, props *Props, name, prefix string) (*PID, error) {
	if props == nil {
		return nil, ErrNilProps
	}
	id := name
	nested := !s.isGuardian(parent)
	if !nested && strings.HasPrefix(name, "#") {
		return nil, fmt.Errorf("%w: %q: a name under a guardian must not begin with '#' (children's IDs do)", ErrInvalidName, name)
	}
	if !nested && IsFutureID(name) {
		return nil, fmt.Errorf("%w: %q: a name under a guardian must not begin with %q (futures' IDs do)", ErrInvalidName, name, futureIDPrefix)
	}
	if !nested && name == "" && (prefix == futureIDPrefix[:len(futureIDPrefix)-1] || IsFutureID(prefix)) {
		// The generated "<prefix>$<n>" would be of a future's form too
		// (TestSpawnPrefixOfFutureFormRefused).
		return nil, fmt.Errorf("%w: prefix %q: a generated name under a guardian must not begin with %q (futures' IDs do)", ErrInvalidName, prefix, futureIDPrefix)
	}
	var seq uint64 // the generated ID's number; 0 for a name
	var idb []byte // the ID when built here; it goes into the cell (cell_id.go)
	var buf [64]byte
	if name == "" || nested {
		// "[#<parent's index>/]<name>", the name given or "<prefix>$<seq>".
		b := buf[:0]
		if nested {
			b = childPrefix(b, parent)
		}
		if name != "" {
			b = append(b, name...)
		} else {
			b = append(append(b, prefix...), '$')
			seq, b = s.freeSeq(b)
		}
		idb = b
	}
	if s.stopped.Load() {
		if seq != 0 {
			s.registry.finishSeq(seq)
		}
		return nil, ErrSystemStopped
	}
	c := &cell{sys: s, props: props, childSlot: -1}
	if idb != nil {
		id = c.idbuf.set(idb)
	}
	c.pid.ID = id
	// A name is reserved before the actor is made: a taken one is refused
	// before the Props' producer runs, so that no actor instance is made
	// (with whatever its producer does) for an actor that never exists
	// (TestDuplicateNameRunsNoProducer). A generated ID is nobody else's.
	// initCell lets no panic out (the producer's, an invoke middleware
	// factory's and the kind middleware's are recovered), so fill always
	// follows a reservation.
	if seq == 0 && !s.registry.reserve(id) {
		return nil, fmt.Errorf("%w: %q", ErrNameExists, id)
	}
	s.initCell(c, parent)
	// Registered, c is reachable by ID (a PID rebuilt from the wire, a
	// name) before its parent lists it: Started is queued first, with the
	// mailbox claimed, so that whatever finds c meanwhile (a message, a
	// Stop) queues behind it and nothing runs c until it is handed to its
	// dispatcher below; Started stays the first message
	// (TestStartedFirstForMessageByName). Nobody else sees the mailbox yet,
	// so the claim always succeeds.
	c.mb.PostSystemClaim(envelope{msg: startSys})
	if seq == 0 {
		s.registry.fill(id, c)
	} else if !s.registry.addSeq(id, seq, c) {
		return nil, fmt.Errorf("%w: %q", ErrNameExists, id)
	}
	s.metrics.spawned(c)
	if !parent.addChild(c) {
		// The parent stopped its children already (Shutdown began after
		// the check above, or the parent is stopping). Nobody would stop
		// this one: it ends here, running none of the user's code
		// (abandon). It did stop itself through its mailbox, handed to its
		// pool, which drops it once Shutdown has closed it (a producer that
		// ran past Shutdown): it then stayed registered for good, and what
		// was sent to it was neither delivered nor dead-lettered
		// (TestSpawnProducerPastShutdownLeavesNothing).
		c.abandon()
		if s.stopped.Load() {
			return nil, ErrSystemStopped
		}
		return nil, fmt.Errorf("%w: %s", ErrParentStopping, parent.selfPID())
	}
	if w == nil && parent == s.userGuardian {
		s.spawnStart(c) // from the root context: the start may be deferred (future_deferred.go)
	} else {
		c.mb.Dispatcher().ScheduleFrom(w, c)
	}
	return c.selfPID(), nil
}

// resolve finds the process of a PID and caches it in the PID.
func (s *System) resolve(pid *PID) Process {
	if p := pid.cached(); p != nil {
		return p
	}
	if pid.Address == s.Address() || pid.Address == LocalAddress {
		if p, ok := s.registry.get(pid.ID); ok {
			pid.cache(p)
			return p
		}
		return s.deadLetters
	}
	if h := s.remote.Load(); h != nil {
		if p := (*h)(pid); p != nil {
			pid.cache(p)
			return p
		}
	}
	return s.deadLetters
}

// send delivers a user message; w is the worker of the sending actor.
func (s *System) send(w *scheduler.Worker, pid *PID, msg any, sender *PID) {
	if pid == nil {
		s.deadLetter(nil, msg, sender, ErrNilPID)
		return
	}
	if c := pid.local.Load(); c != nil {
		c.postUser(w, msg, sender)
		return
	}
	p := pid.cached()
	if p == nil {
		p = s.resolve(pid)
	}
	switch q := p.(type) {
	case *cell:
		q.postUser(w, msg, sender)
	case *Future: // the runtime's own: no recover on a reply's path
		q.SendUser(pid, msg, sender)
	default:
		s.sendToProcess(p, pid, msg, sender)
	}
}

// sendToProcess hands msg to p, a process other than an actor or a
// future: a custom one (RegisterProcess), a remote proxy, dead letters. A
// panic in it makes msg a dead letter whose reason wraps the *PanicError
// (a waiting future fails with it), instead of going on up the sender's
// goroutine, which may be the runtime's: the timer goroutine completing a
// timed-out future piped to p, a worker, a connection's reader
// (TestCustomProcessPanicIsDeadLetter).
func (s *System) sendToProcess(p Process, pid *PID, msg any, sender *PID) {
	defer func() {
		if r := recover(); r != nil {
			s.deadLetter(pid, msg, sender, fmt.Errorf("actor: process %s panicked: %w", pid, &PanicError{Value: r, Stack: debug.Stack()}))
		}
	}()
	p.SendUser(pid, msg, sender)
}

func (s *System) sendSystem(w *scheduler.Worker, pid *PID, m SystemMessage) {
	if pid == nil {
		return
	}
	p := pid.cached()
	if p == nil {
		p = s.resolve(pid)
	}
	if c, ok := p.(*cell); ok {
		c.postSystem(w, m)
		return
	}
	s.sendSystemToProcess(p, pid, m)
}

// sendSystemToProcess is sendToProcess for a system message.
func (s *System) sendSystemToProcess(p Process, pid *PID, m SystemMessage) {
	defer func() {
		if r := recover(); r != nil {
			s.deadLetter(pid, m, nil, fmt.Errorf("actor: process %s panicked: %w", pid, &PanicError{Value: r, Stack: debug.Stack()}))
		}
	}()
	p.SendSystem(pid, m)
}

// Shutdown shuts down the extensions in reverse install order (remote
// says goodbye to its peers), then stops every actor, children first (user
// actors, then system actors), then the timers and worker pools, and
// waits for all of it, or for ctx. Its error lists the parts that had not
// finished when it stopped waiting for them (each wraps ctx's error); a
// part found finished is not listed, even with a ctx that had already
// ended. When the user actors do not stop within ctx, the system actors
// are told to stop all the same; both trees go on stopping after Shutdown
// returns, and the worker pools, which then count as unfinished, stay
// open for them until both have stopped (an actor whose Stopped never
// returns keeps them open). When it returns nil, Terminated is closed:
// every goroutine of the system has returned.
//
// It is idempotent. Later calls (and calls concurrent with the first)
// wait for the first to return (ctx's error if ctx ends before), then for
// what it left running, until Terminated is closed or their own ctx ends:
// nil once the system has terminated, whatever the first call returned,
// else the parts still running, each wrapping ctx's error (see
// Terminated). So a caller whose first Shutdown ran out of time can give
// the rest more time with another Shutdown.
//
// Do not call it inside an actor's Receive (or anything that runs on the
// actor's turn): it waits for every actor to stop, the calling one too,
// which cannot stop before its Receive returns, so it would wait until ctx
// ends and report the actors unfinished. From an actor, run it on a
// goroutine of its own: go sys.Shutdown(ctx).
func (s *System) Shutdown(ctx context.Context) error {
	first := false
	s.shutdownOnce.Do(func() { first = true })
	if !first {
		// A first call that has returned wins over an ended ctx
		// (TestShutdownLaterCallEndedCtx).
		if err := await.Done(ctx, s.shutdownDone); err != nil {
			return err
		}
		return s.awaitTerminated(ctx)
	}
	s.shutdownErr = s.shutdown(ctx)
	close(s.shutdownDone)
	return s.shutdownErr
}

func (s *System) shutdown(ctx context.Context) error {
	var errs []error
	s.logger.Debug("actor system shutting down", "name", s.name)
	if s.exts != nil {
		errs = append(errs, s.exts.ShutdownAll(ctx))
	}
	s.stopped.Store(true)
	s.releaseDeferred(nil) // a deferred turn stops now, not at the sweep
	s.sendSystem(nil, s.userGuardian.selfPID(), stopSys)
	systemDone := s.guardiansDone
	var unfinished error // ctx's error when a tree has not stopped within it
	if err := s.await(ctx, s.userDone); err != nil {
		errs = append(errs, fmt.Errorf("actor: stopping user actors: %w", err))
		unfinished = err
		// The root guardian stops only after the user guardian: what is
		// left to wait for is the system guardian's tree.
		systemDone = s.systemDone
	}
	// The system actors are told to stop even when the user actors have
	// not stopped within ctx: left running, an extension's actors (and
	// what they hold) would never stop and no error would name them. The
	// tree goes on stopping after ctx, on the workers still running
	// (TestShutdownUnfinishedUserActorsStillStopsSystemActors).
	s.sendSystem(nil, s.rootGuardian.selfPID(), stopSys)
	if err := s.await(ctx, systemDone); err != nil {
		errs = append(errs, fmt.Errorf("actor: stopping system actors: %w", err))
		unfinished = err
	}
	s.timers.Close()
	s.tq.close()
	if unfinished != nil && s.closePoolsLate() {
		// The pools run what is left of the stop (see closePoolsLate).
		if s.coord != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the worker pool: %w", unfinished))
		}
		if b := s.blockingPool(); b != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the blocking pool: %w", unfinished))
		}
	} else {
		errs = append(errs, s.closePools(ctx)...)
	}
	errs = append(errs, s.events.close(ctx))
	if s.exts != nil {
		// Within ctx, naming the extension: terminate's own wait for them
		// is unbounded, and with every part done it runs on this goroutine,
		// so an extension.Lingerer whose Shutdown returned nil with its
		// Terminated still open held Shutdown past ctx
		// (TestReview6ShutdownBoundedByCtxWithLingererOpenAfterNil).
		errs = append(errs, s.exts.AwaitTerminated(ctx))
	}
	s.metrics.close()
	err := errors.Join(errs...)
	s.terminateWhenDone(err == nil)
	return err
}

// States of System.poolsLate.
const (
	poolsNow         = iota // Shutdown closes the pools (its trees stopped within ctx)
	poolsCloseLate          // the root guardian's stop closes them
	poolsRootStopped        // the root guardian has stopped
)

// closePoolsLate leaves the closing of the worker pools to the root
// guardian's stop, when Shutdown's ctx ended before the actor trees
// stopped; false when the root guardian has stopped meanwhile (Shutdown
// closes them then).
//
// A stop left unfinished goes on after Shutdown returns, and it may cross
// from one pool to the other: a parent on the shared pool stops its child
// on the blocking pool (and the other way round), a guardian stops an
// actor on the blocking pool. Closed with ctx, a pool whose workers were
// all parked had exited them, and dropped what it was then given: the
// stop of such a child was lost, so it never stopped, nor its parent, nor
// the guardians, and no Stopped hook of theirs ever ran
// (TestShutdownUnfinishedStopCrossesPools). The pools stay open until the
// trees have stopped (their idle workers parked), then close from the root
// guardian's last step, which does not wait for them: the workers exit
// once they have run what is queued.
func (s *System) closePoolsLate() bool {
	return s.poolsLate.CompareAndSwap(poolsNow, poolsCloseLate)
}

// closePools shuts the worker pools down, bounded by ctx, and returns
// what had not finished.
func (s *System) closePools(ctx context.Context) []error {
	var errs []error
	if s.coord != nil {
		if err := s.coord.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the worker pool: %w", err))
		}
	}
	if b := s.blockingPool(); b != nil {
		if err := b.Shutdown(ctx); err != nil {
			errs = append(errs, fmt.Errorf("actor: stopping the blocking pool: %w", err))
		}
	}
	return errs
}

// blockingPool returns the pool of blocking actors, nil when none has
// been started.
func (s *System) blockingPool() *scheduler.Coordinator {
	s.blockingMu.Lock()
	defer s.blockingMu.Unlock()
	return s.blocking
}

// doneCtx is a context that has ended: closePools from the root
// guardian's stop, on a worker of a pool it closes, must not wait for the
// pool.
var doneCtx = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// stepper is a dispatcher that the caller drives (the manual executor).
type stepper interface{ RunUntilIdle() int }

// await waits for done; with a dispatcher that must be driven, it drives it.
func (s *System) await(ctx context.Context, done <-chan struct{}) error {
	if st, ok := s.dispatcher.(stepper); ok && s.coord == nil {
		for {
			select {
			case <-done:
				return nil
			default:
			}
			if st.RunUntilIdle() == 0 {
				select {
				case <-done:
					return nil
				default:
					return errors.New("actor: shutdown stalled: the manual dispatcher has nothing to run")
				}
			}
		}
	}
	// await.Done, not a select: a part found finished is not reported
	// unfinished with an ended ctx (TestShutdownEndedCtxReportsOnlyUnfinished).
	return await.Done(ctx, done)
}

// futureSeqBase is where a system's future numbers start: a random 45-bit
// number. A node restarted at the same address would otherwise number its
// futures as its earlier incarnation did, and a late answer to one of
// those (from a peer that was paused or cut off) would complete the new
// incarnation's future of the same number with another request's answer;
// the cluster met exactly that (TestActivationReplyForAnotherIdentityRefused).
// Two incarnations' numbers overlap only when their bases fall within the
// count of futures either made (under 10^-6 for ten million futures); the
// IDs stay within futureID's 16 bytes for 6*10^13 futures. Generated
// actor IDs start at a random base for the same reason (idSeqBase); a
// grain's ID is its identity and stays.
func futureSeqBase() uint64 { return rand.Uint64() >> 19 }

// idSeqBase is where a system's generated actor IDs start (unless
// SystemConfig.DeterministicIDs): a random 40-bit number. A node restarted
// at the same address would otherwise give its new actors the IDs of its
// earlier incarnation's, and a PID of an old actor held by a peer (a
// watcher, a cached reply-to) would deliver to an unrelated new actor. Two
// incarnations that spawn n actors each share an ID only when their bases
// lie within n of each other: a chance of about 2n/2^40 (2*10^-6 for a
// million actors). The numbers stay below 36^8, so a generated ID is "$"
// and at most 8 digits, and a nested one ("#<parent's mailbox index>/$<seq>")
// still fits cellID's 16 bytes while the parent's index has at most 5
// digits (60 million actors spawned).
func idSeqBase() uint64 { return rand.Uint64() >> 24 }
