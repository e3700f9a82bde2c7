package router

import (
	"cmp"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/actor"
)

// Spawner is where a router is started: an actor's Context (the router's
// actor becomes its child) or the system's RootContext (a top-level
// router). Both implement it.
type Spawner interface {
	SpawnNamed(props *actor.Props, name string) (*actor.PID, error)
	Stop(pid *actor.PID)
	System() *actor.System
}

// Option configures SpawnPool and SpawnGroup.
type Option interface{ apply(*options) }

type options struct {
	name string
	sup  actor.SupervisorStrategy
}

type optionFunc func(*options)

func (f optionFunc) apply(o *options) { f(o) }

// WithName names the router: its PID's ID is the name (under the
// spawner's prefix, like a child actor's), and its actor is
// "<name>$manager". Without it the name is "router$<n>", with n from the
// system's sequence of generated actor IDs (its actor is
// "router$manager$<n>"), so fresh deterministic systems name their routers
// alike and a restarted node does not reuse its predecessor's names.
func WithName(name string) Option { return optionFunc(func(o *options) { o.name = name }) }

// WithSupervisor sets the strategy with which a pool supervises its
// routees; actor.DefaultStrategy() when not given. A routee the strategy
// restarts stays a routee; one it stops leaves the pool.
func WithSupervisor(s actor.SupervisorStrategy) Option {
	return optionFunc(func(o *options) { o.sup = s })
}

// managerSuffix ends the ID of a named router's actor; the router's own ID
// is the same without it.
const managerSuffix = "$manager"

// unnamedPrefix and unnamedManagerPrefix: an unnamed router's actor is
// spawned with the generated ID "[parent/]router$manager$<n>", and the
// router takes "[parent/]router$<n>". The number is the system's, unique
// among its generated IDs, so no generated ID is the router's.
const (
	unnamedPrefix        = "router"
	unnamedManagerPrefix = unnamedPrefix + managerSuffix
)

// prefixSpawner is the part of RootContext and actor.Context that spawns
// under a generated ID.
type prefixSpawner interface {
	SpawnPrefix(props *actor.Props, prefix string) *actor.PID
}

// routerSeq numbers the unnamed routers of a Spawner that is no
// prefixSpawner.
var routerSeq atomic.Uint64

// SpawnPool starts a pool router of size routees spawned from props. The
// routees are children of the router's actor, supervised by the
// WithSupervisor strategy; a routee that stops (and is not restarted)
// leaves the pool; stopping the router stops them. Resize changes the
// size at runtime. The returned PID is the router: what is sent to it is
// routed by strategy, management messages (AddRoutee, RemoveRoutee,
// Resize, GetRoutees) and PoisonPill go to its actor, and Stop and Watch
// apply to the router as to an actor. Messages sent before the routees
// exist are held and routed, in order, as soon as they do.
func SpawnPool(sp Spawner, props *actor.Props, size int, strategy Strategy, opts ...Option) (*actor.PID, error) {
	if props == nil {
		return nil, fmt.Errorf("%w: nil routee props", ErrInvalidConfig)
	}
	if size < 0 {
		return nil, fmt.Errorf("%w: pool size must be ≥ 0, got %d", ErrInvalidConfig, size)
	}
	return spawn(sp, strategy, &manager{props: props, size: size}, nil, opts)
}

// SpawnGroup starts a group router over routees, PIDs the caller owns
// (local or remote). The router watches them: a routee that ends leaves
// the group. AddRoutee and RemoveRoutee change the group; stopping the
// router does not stop the routees. See SpawnPool for what the returned
// PID does.
func SpawnGroup(sp Spawner, strategy Strategy, routees []*actor.PID, opts ...Option) (*actor.PID, error) {
	var pids []*actor.PID
	for _, p := range routees {
		if p != nil && indexOf(pids, p) < 0 {
			pids = append(pids, p)
		}
	}
	return spawn(sp, strategy, &manager{pids: pids}, pids, opts)
}

func spawn(sp Spawner, strategy Strategy, m *manager, group []*actor.PID, opts []Option) (*actor.PID, error) {
	if sp == nil {
		return nil, fmt.Errorf("%w: nil spawner", ErrInvalidConfig)
	}
	if strategy == nil {
		return nil, fmt.Errorf("%w: nil strategy", ErrInvalidConfig)
	}
	if sg, ok := strategy.(scatterGatherStrategy); ok && sg.timeout <= 0 {
		return nil, fmt.Errorf("%w: scatter-gather timeout must be > 0, got %v", ErrInvalidConfig, sg.timeout)
	}
	o := options{sup: actor.DefaultStrategy()}
	for _, opt := range opts {
		opt.apply(&o)
	}
	ps, generated := sp.(prefixSpawner)
	generated = generated && o.name == ""
	if o.name == "" && !generated {
		o.name = unnamedPrefix + "$" + strconv.FormatUint(routerSeq.Add(1), 36)
	}
	sys := sp.System()
	r := &router{sys: sys, root: sys.Root(), routing: strategy.newRouting()}
	if m.props != nil {
		r.routees.Store(pendingSet)
	} else {
		r.routees.Store(newRouteeSet(slices.Clone(group)))
	}
	m.r = r
	props := actor.PropsFromProducer(func() actor.Actor { return m },
		actor.WithSupervisor(o.sup), actor.WithKind("router"))
	var (
		mgr *actor.PID
		id  string
		err error
	)
	if generated {
		// SpawnPrefix reports no error, only nil for a refused spawn: it
		// is told by the system having stopped, else by a parent that
		// did not take the child (it stopped its children already), else
		// it was a SpawnMiddleware's refusal.
		mgr = ps.SpawnPrefix(props, unnamedManagerPrefix)
		if sys.Stopped() {
			if mgr != nil {
				sp.Stop(mgr)
			}
			return nil, fmt.Errorf("router: spawning: %w", actor.ErrSystemStopped)
		}
		c, isCtx := sp.(actor.Context)
		if isCtx && (mgr == nil || indexOf(c.Children(), mgr) < 0) {
			return nil, fmt.Errorf("router: spawning: %w: %s (or a SpawnMiddleware refused the spawn)", actor.ErrParentStopping, c.Self())
		}
		if mgr == nil {
			return nil, errors.New("router: spawning: a SpawnMiddleware refused the spawn")
		}
		if i := strings.LastIndex(mgr.ID, unnamedManagerPrefix+"$"); i >= 0 {
			id = mgr.ID[:i] + unnamedPrefix + mgr.ID[i+len(unnamedManagerPrefix):]
		} else { // a spawn middleware chose another ID: still unique
			id = mgr.ID + "$router"
		}
	} else {
		mgr, err = sp.SpawnNamed(props, o.name+managerSuffix)
		if err != nil {
			if mgr != nil {
				sp.Stop(mgr)
			}
			return nil, fmt.Errorf("router: spawning %q: %w", o.name, err)
		}
		id = strings.TrimSuffix(mgr.ID, managerSuffix)
	}
	r.mgr = mgr
	// graph.mu, then r.mu: the check, the registration and the graph's
	// record happen at once (see graph). The check takes the routees
	// published now, not group: the router's actor runs from its spawn,
	// and an AddRoutee sent to it by name before the router has its PID
	// is added unchecked (manager.add), under graph.mu, so it is among
	// them (TestRouterCycleThroughEarlyAddRouteeRefused).
	graph.mu.Lock()
	defer graph.mu.Unlock()
	if closesCycle(sys, id, r.routees.Load().pids) {
		sp.Stop(mgr)
		return nil, fmt.Errorf("router: spawning %q: %w", id, ErrCycle)
	}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, fmt.Errorf("router: spawning %q: %w", id, ErrStopped)
	}
	pid, err := sys.RegisterProcess(id, r)
	if err == nil {
		r.self.Store(pid)
		r.register(id)
	}
	r.mu.Unlock()
	if err != nil {
		sp.Stop(mgr)
		return nil, fmt.Errorf("router: registering %q: %w", id, err)
	}
	return pid, nil
}

// pendingSet marks a pool whose routees are not spawned yet; closedSet a
// stopped router. Both are compared by pointer.
var (
	pendingSet = &routeeSet{}
	closedSet  = &routeeSet{}
)

// router is the Process behind a router's PID. Routing happens in
// SendUser, on the sender's goroutine: one atomic load of the routee
// snapshot, the strategy's choice, and a post straight into the routee's
// mailbox. The router's actor (manager) owns every change.
type router struct {
	sys     *actor.System
	root    *actor.RootContext
	routing routing
	routees atomic.Pointer[routeeSet]
	self    atomic.Pointer[actor.PID]
	mgr     *actor.PID

	mu       sync.Mutex // guards what follows; never taken on the routing path
	closed   bool
	early    []early // messages held while a pool starts (routees == pendingSet)
	watchers []*actor.PID
	gathers  map[*gather]struct{}
}

type early struct {
	msg    any
	sender *actor.PID
}

var _ actor.Process = (*router)(nil)

// SendUser implements actor.Process: it routes msg.
func (r *router) SendUser(_ *actor.PID, msg any, sender *actor.PID) {
	set := r.routees.Load()
	switch carried(msg).(type) {
	case management, *actor.PoisonPill:
		r.root.SendWithSender(r.mgr, msg, sender)
		return
	case *BroadcastMessage:
		if set == pendingSet && r.hold(msg, sender) {
			return
		}
		if payload, ok := broadcastPayload(msg); ok {
			r.broadcast(r.routees.Load(), payload, sender)
		} else {
			r.refuse(msg, sender, reasonNilBroadcast)
		}
		return
	}
	if set == pendingSet {
		if r.hold(msg, sender) {
			return
		}
		set = r.routees.Load()
	}
	if set == closedSet {
		r.refuse(msg, sender, reasonStopped)
		return
	}
	r.routing.route(r, set, msg, sender)
}

func (r *router) route(set *routeeSet, msg any, sender *actor.PID) {
	if set == closedSet {
		r.refuse(msg, sender, reasonStopped)
		return
	}
	if _, ok := carried(msg).(*BroadcastMessage); ok {
		if payload, ok := broadcastPayload(msg); ok {
			r.broadcast(set, payload, sender)
		} else {
			r.refuse(msg, sender, reasonNilBroadcast)
		}
		return
	}
	r.routing.route(r, set, msg, sender)
}

// carried is the message msg carries when it came with a header (an
// actor.MessageEnvelope: the tracing middleware, a remote node or a
// Forward of a traced message wraps it so), else msg. The router decides
// by it, as an actor's Receive would see it, and delivers msg itself, so
// the header reaches the routee. One type assertion, no allocation.
func carried(msg any) any {
	if e, ok := msg.(*actor.MessageEnvelope); ok && e != nil {
		return e.Message
	}
	return msg
}

// broadcastPayload is what a *BroadcastMessage (msg, or the message an
// envelope msg carries) delivers to every routee: its Message, with the
// envelope's header when it came with one; false for a nil
// *BroadcastMessage, which carries nothing.
func broadcastPayload(msg any) (any, bool) {
	if e, ok := msg.(*actor.MessageEnvelope); ok && e != nil {
		b := e.Message.(*BroadcastMessage)
		if b == nil {
			return nil, false
		}
		return &actor.MessageEnvelope{Header: e.Header, Message: b.Message}, true
	}
	b := msg.(*BroadcastMessage)
	if b == nil {
		return nil, false
	}
	return b.Message, true
}

// hold keeps msg until the pool's routees exist; false when they exist
// by now (route it).
func (r *router) hold(msg any, sender *actor.PID) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.routees.Load() != pendingSet {
		return false
	}
	r.early = append(r.early, early{msg, sender})
	return true
}

// publish makes set the routees. The first publish of a pool routes the
// held messages first, under the lock, so that no message overtakes one
// sent before it.
func (r *router) publish(set *routeeSet) {
	if r.routees.Load() != pendingSet {
		r.routees.Store(set)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.early {
		r.routeHeld(set, e)
	}
	r.early = nil
	r.routees.Store(set)
}

// routeHeld routes a held message on the router's actor. User code runs in
// it (a message's HashKey): a panic there refuses that message, a dead
// letter wrapping *actor.PanicError, as the system does for a message
// routed from the sender's goroutine once the routees exist. Before, it
// failed the router's actor, whose restart routed the same held message
// again, until its strategy stopped the router for good
// (TestNewuser8PanickingHashKeyHeldAtStartStopsTheRouter).
func (r *router) routeHeld(set *routeeSet, e early) {
	defer func() {
		if v := recover(); v != nil {
			r.refuse(e.msg, e.sender, fmt.Errorf("router: routing a held message panicked: %w",
				&actor.PanicError{Value: v, Stack: debug.Stack()}))
		}
	}()
	r.route(set, e.msg, e.sender)
}

// SendSystem implements actor.Process: Watch and Unwatch are the router's
// own (a watcher's Terminated names the router's PID); other system
// messages (Stop) go to the router's actor.
func (r *router) SendSystem(_ *actor.PID, m actor.SystemMessage) {
	switch m := m.(type) {
	case *actor.Watch:
		r.watch(m.Watcher)
	case *actor.Unwatch:
		r.mu.Lock()
		if i := indexOf(r.watchers, m.Watcher); i >= 0 {
			r.watchers = append(r.watchers[:i], r.watchers[i+1:]...)
		}
		r.mu.Unlock()
	case *actor.TerminatedSystem:
	default:
		r.sys.SendSystem(r.mgr, m)
	}
}

// StopProcess implements actor.Process: it stops the router.
func (r *router) StopProcess(*actor.PID) { r.sys.SendSystem(r.mgr, &actor.Stop{}) }

func (r *router) watch(w *actor.PID) {
	if w == nil {
		return
	}
	r.mu.Lock()
	if !r.closed {
		if indexOf(r.watchers, w) < 0 {
			r.watchers = append(r.watchers, w)
		}
		r.mu.Unlock()
		return
	}
	r.mu.Unlock()
	r.sys.SendSystem(w, &actor.TerminatedSystem{Terminated: actor.Terminated{Who: r.self.Load(), Why: actor.TerminatedStopped}})
}

// close ends the router, from its actor's Stopped: the ID is released,
// held messages and waiting scatter-gather requests fail, watchers hear
// of it.
func (r *router) close() {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return
	}
	r.closed = true
	r.routees.Store(closedSet)
	held, watchers := r.early, r.watchers
	r.early, r.watchers = nil, nil
	gathers := make([]*gather, 0, len(r.gathers))
	for g := range r.gathers {
		gathers = append(gathers, g)
	}
	// Failed in the order they came, not the map's: on a deterministic
	// system the requesters then hear of it in the same order every run.
	slices.SortFunc(gathers, func(a, b *gather) int { return cmp.Compare(a.seq, b.seq) })
	self := r.self.Load()
	r.mu.Unlock()
	if self != nil {
		r.unregister(self.ID)
		r.sys.UnregisterProcess(self)
	}
	for _, e := range held {
		r.refuse(e.msg, e.sender, reasonStopped)
	}
	for _, g := range gathers {
		g.fail(reasonStopped)
	}
	if len(watchers) > 0 {
		term := &actor.TerminatedSystem{Terminated: actor.Terminated{Who: self, Why: actor.TerminatedStopped}}
		for _, w := range watchers {
			r.sys.SendSystem(w, term)
		}
	}
}

func (r *router) deliver(to *actor.PID, msg any, sender *actor.PID) {
	r.root.SendWithSender(to, msg, sender)
}

func (r *router) broadcast(set *routeeSet, msg any, sender *actor.PID) {
	if set == closedSet {
		r.refuse(msg, sender, reasonStopped)
		return
	}
	if len(set.pids) == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	for _, p := range set.pids {
		r.root.SendWithSender(p, msg, sender)
	}
}

// refuse makes msg a dead letter of the router's; a waiting future fails
// with reason.
func (r *router) refuse(msg any, sender *actor.PID, reason error) {
	r.sys.DeadLetter(r.self.Load(), msg, sender, reason)
}

func indexOf(pids []*actor.PID, p *actor.PID) int {
	for i, q := range pids {
		if q.Equal(p) {
			return i
		}
	}
	return -1
}
