package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/extension"
	"github.com/fraktor-go/fraktor/internal/await"
	"github.com/fraktor-go/fraktor/remote"
)

// Name is the cluster extension's name in the system's extension registry.
const Name = "cluster"

// placementName is the name of every member's placement actor.
const placementName = "$placement"

// Install returns the installer of the cluster extension for
// actor.SystemConfig.Extensions (B1.1). It requires the remote extension
// (install remote.Install first in the same list; the registry orders them).
// An invalid cfg makes actor.NewSystem fail with an error naming the field
// and nothing is installed (B1.2); cfg.Disabled installs nothing (B1.4).
//
// Installing joins cfg.Provider with a new incarnation, spawns the
// placement actor and starts consuming the membership's views; it returns
// without waiting for the first view (Status is StatusJoining until then).
// The system's Shutdown leaves the cluster gracefully before remote shuts
// down (V2.5, B3.4, B3.5).
func Install(cfg Config) actor.ExtensionInstaller { return &installer{cfg: cfg} }

type installer struct{ cfg Config }

func (i *installer) Name() string       { return Name }
func (i *installer) Requires() []string { return []string{remote.Name} }
func (i *installer) Enabled() bool      { return !i.cfg.Disabled }
func (i *installer) Validate() error    { return i.cfg.Validate() }
func (i *installer) Install(ctx context.Context, host actor.Host) (actor.Extension, error) {
	return newCluster(ctx, host, i.cfg.withDefaults())
}

// Get returns the cluster extension of sys, or nil when it is not installed
// (B1.3). No method of that nil *Cluster panics: the calls fail with
// ErrNotInstalled (the futures have failed with it), Send drops, the
// accessors answer their zero values.
func Get(sys *actor.System) *Cluster {
	c, _ := extension.Get[*Cluster](sys.Extensions(), Name)
	return c
}

// Cluster is the cluster runtime of one member: the cluster context
// (Request, RequestFuture, Send), the placement actor that hosts this
// member's grains, and the membership it holds. Obtain it with Get. All
// methods are safe for concurrent use.
type Cluster struct {
	sys      *actor.System
	root     *actor.RootContext
	cfg      Config
	remote   *remote.Remote
	log      *slog.Logger
	strategy HashStrategy
	lookup   IdentityLookup // owns the PidCache (L6)
	custom   bool           // lookup came from Config.IdentityLookup
	cache    *PidCache      // the lookup's cache; nil for a custom lookup without one
	rnd      *lockedRand
	metrics  *clusterMetrics
	kinds    []Kind    // with idle timeouts resolved
	det      *detached // non-nil: a detached cluster (detached.go)

	view atomic.Pointer[viewSnap]
	// viewMu orders the stores of view: installView (a new view, on the
	// membership goroutine) and onBlockEvent (the current view's ring
	// rebuilt, on the goroutine that changed the block list), so a ring
	// rebuilt for the block list is never stored over a newer view. It
	// also covers installView's look at remote's block list and
	// onBlockEvent's look at the view: a block lands either before the
	// look (the new view leaves the member out) or after the store (the
	// event finds the member in it); before, an event that came between
	// them looked at the older view without the member, and the new view
	// kept a just-blocked member in owner selection until the next one.
	viewMu     sync.Mutex
	membership atomic.Pointer[membershipBox]
	status     atomic.Int32
	// settledHash is the hash of the view the placement actor found
	// settled last, valid while settledOK (Settled).
	settledHash atomic.Uint64
	settledOK   atomic.Bool
	lookupMu    sync.Mutex
	// lookupCtx is the context of the resolution in a custom lookup's Get
	// (set and cleared under lookupMu): the lookup's Activator, whose
	// signature (L1) has no context, asks the owner within it, so the
	// deadline of the request that needed the activation bounds it.
	lookupCtx atomic.Pointer[context.Context]

	placement *actor.PID
	pa        *placementActor
	active    atomic.Int64
	byKind    map[string]*atomic.Int64 // activations by kind name; keys fixed at install

	blockMu sync.Mutex
	blocked map[string]struct{} // member keys left out of owner selection
	// suspended: the addresses the reachability vote keeps out of owner
	// selection (reachability.go).
	suspended map[string]*suspension

	links linkFailures // why the last connection to an address failed

	flights flightGroup

	stop      chan struct{}
	ctx       context.Context // ends at Shutdown: bounds background requests
	cancelCtx context.CancelFunc
	wg        sync.WaitGroup
	unsub     []func()
	shutOnce  sync.Once
	shutErr   error
	incarnSeq atomic.Uint64

	// joinMu orders a rejoin's new membership against Shutdown, so that
	// every incarnation a rejoin registers is left: a rejoin publishes its
	// membership only while shutBegun is false (else it leaves it at once),
	// and Shutdown sets shutBegun before it reads the membership to leave.
	joinMu    sync.Mutex
	shutBegun bool

	// fenceAt is the lease deadline minus the stop budget in Unix
	// nanoseconds of the system clock (1: fenced; 0: no lease yet), kept
	// by the placement actor: past it a grain handles no more messages.
	fenceAt atomic.Int64

	// remoteGone is set when this member's remote node ended while the
	// cluster ran (watchRemote): fenced for good, no rejoin.
	remoteGone atomic.Bool

	goMu     sync.Mutex
	goClosed bool // Shutdown waits for the tracked goroutines: no new ones
	// lingering holds the Terminated channels of ended memberships whose
	// goroutines may still run (lingerMembership); goMu.
	lingering []<-chan struct{}
	// retiring holds the fenced incarnations whose release is under way
	// (beginRetire, retired); goMu. Shutdown tries each once more
	// (retirePending).
	retiring map[Membership]struct{}
	// term is closed once the tracked goroutines have returned after
	// Shutdown (Terminated).
	term chan struct{}

	warnNext       atomic.Int64 // clock Unix nanoseconds before which no retry warning is logged
	warnSuppressed atomic.Uint64
}

type membershipBox struct{ m Membership }

// viewSnap is the caller side's view: immutable once published.
type viewSnap struct {
	topo Topology
	ring Ring
}

var _ actor.Extension = (*Cluster)(nil)

func newCluster(ctx context.Context, host actor.Host, cfg Config) (*Cluster, error) {
	sys := host.System()
	r := remote.Get(sys)
	if r == nil {
		return nil, fmt.Errorf("%w: the cluster needs the remote extension", ErrInvalidConfig)
	}
	if cfg.Name == "" {
		cfg.Name = r.SystemName()
	}
	if r.SystemName() != cfg.Name {
		// Remote's handshake refuses peers of another system name: the
		// cluster name is that name, so members of other clusters never
		// connect.
		return nil, invalidConfig("Name %q must equal remote's SystemName %q (the handshake refuses other clusters by it)", cfg.Name, r.SystemName())
	}
	if err := checkProviderName(cfg.Provider, cfg.Name); err != nil {
		return nil, err
	}
	if err := r.Serializers().RegisterProto(
		(*clusterpb.ActivationRequest)(nil), (*clusterpb.ActivationResponse)(nil),
		(*clusterpb.ViewAck)(nil), (*clusterpb.ActivationTerminated)(nil), (*clusterpb.BlockNotice)(nil), (*clusterpb.ReachProbe)(nil),
		(*clusterpb.GrainError)(nil),
	); err != nil && !errors.Is(err, remote.ErrAlreadyRegistered) {
		return nil, err
	}
	for _, k := range cfg.Kinds {
		if k.messages != nil {
			if err := k.messages.register(r.Serializers()); err != nil {
				return nil, fmt.Errorf("cluster: kind %q: %w", k.name, err)
			}
		}
	}
	lcfg := DefaultLookupConfig()
	lcfg.CacheCapacity, lcfg.PIDTTL = cfg.PidCacheCapacity, cfg.PidCacheTTL
	lcfg.IdleTTL = max(lcfg.IdleTTL, cfg.PidCacheTTL)
	lcfg.Hash = HashConfig{Seed: cfg.HashSeed, Weighted: cfg.Weighted}
	kinds := make([]Kind, len(cfg.Kinds))
	var c *Cluster // the grain middleware refers to it
	names := make([]string, len(cfg.Kinds))
	for i, k := range cfg.Kinds {
		k.idle = cfg.idleFor(k)
		k.props = k.props.With(actor.WithReceiveMiddleware(func(next actor.ReceiveFunc) actor.ReceiveFunc {
			return c.newGrainMiddleware(next)
		}))
		kinds[i], names[i] = k, k.name
	}
	byKind := make(map[string]*atomic.Int64, len(kinds))
	for _, k := range kinds {
		byKind[k.name] = new(atomic.Int64)
	}
	c = &Cluster{
		sys:      sys,
		root:     sys.Root(),
		cfg:      cfg,
		remote:   r,
		log:      sys.Logger().With("component", "cluster"),
		strategy: lcfg.Hash.Strategy(),
		rnd:      newLockedRand(cfg.Rand),
		kinds:    kinds,
		byKind:   byKind,
		blocked:  map[string]struct{}{},
		stop:     make(chan struct{}),
		term:     make(chan struct{}),
	}
	c.ctx, c.cancelCtx = context.WithCancel(context.Background())
	if err := c.setupLookup(lcfg, names); err != nil {
		return nil, err
	}
	if c.cfg.MemberID == "" {
		c.cfg.MemberID = r.Address()
	}
	var err error
	c.metrics, err = newClusterMetrics(host.MeterProvider())
	if err != nil {
		return nil, err
	}
	c.status.Store(int32(StatusJoining))
	m, err := c.join(ctx)
	if err != nil {
		c.metrics.close()
		return nil, err
	}
	c.membership.Store(&membershipBox{m})
	pa := newPlacementActor(c, m.Self())
	c.pa = pa
	pid, err := host.SpawnSystem(actor.PropsFromProducer(func() actor.Actor { return pa },
		actor.WithSupervisor(grainSupervisor{pa: pa})), placementName)
	if err != nil {
		_ = m.Stop(ctx)
		c.metrics.close()
		return nil, err
	}
	c.placement = pid
	if !c.custom {
		// Sends that reach a grain of this member that is gone go on to
		// its next activation (forward.go).
		if err := host.SetRedirect(pid, c.forward); err != nil {
			c.root.Stop(pid)
			_ = m.Stop(ctx)
			c.metrics.close()
			return nil, err
		}
	}
	c.unsub = append(c.unsub, r.BlockList().Subscribe(c.onBlockEvent))
	c.links.now = c.now
	linkSub := c.sys.EventStream().SubscribeWithPredicate(c.links.record, isLinkEvent)
	c.unsub = append(c.unsub, func() { c.sys.EventStream().Unsubscribe(linkSub) })
	c.wg.Add(1)
	go c.watchMembership(m)
	c.goTracked(c.watchRemote)
	return c, nil
}

// errRemoteEnded: this member's remote node ended while the cluster ran
// (not retried: nothing here can reach another member).
var errRemoteEnded = fmt.Errorf("%w: this member's remote node ended", ErrShuttingDown)

// watchRemote fences this member for good when its remote node ends while
// the cluster runs (placementActor.remoteEnded). A system's Shutdown
// stops the cluster before remote, so it ends this goroutine first.
func (c *Cluster) watchRemote() {
	select {
	case <-c.stop:
	case <-c.remote.Terminated():
		select {
		case <-c.stop:
			return
		default:
		}
		c.remoteGone.Store(true)
		c.root.Send(c.placement, &remoteEndedMsg{})
	}
}

// join registers a new incarnation of this member with the provider.
func (c *Cluster) join(ctx context.Context) (Membership, error) {
	names := make([]string, len(c.kinds))
	for i, k := range c.kinds {
		names[i] = k.name
	}
	inc := uint64(c.sys.Clock().Now().UnixNano()) + c.incarnSeq.Add(1)
	self := Member{ID: c.cfg.MemberID, Incarnation: inc, Address: c.remote.Address(), Kinds: names, Weight: c.cfg.Weight}
	return c.cfg.Provider.Join(ctx, self)
}

// Status returns the runtime's readiness (B1.5); StatusStopped on a nil
// Cluster (none installed).
func (c *Cluster) Status() Status {
	if c == nil {
		return StatusStopped
	}
	return Status(c.status.Load())
}

// Settled reports whether this member's view has settled: the member is
// ready, every member of its view has acknowledged that view (each runs
// nothing it does not own in it), and, if it joined a cluster that existed
// before it, a member that was there vouched for it or it waited out W.
// Until then it refuses (as busy, retried by the caller) the activations of
// some identities it owns, and with a blind joiner all of them. Members
// that left the view do not count: the identities one of them owned still
// wait for its released marker or for W. ViewSettled is published when it
// turns true. False on a nil or detached Cluster.
func (c *Cluster) Settled() bool {
	if c == nil || c.det != nil {
		return false
	}
	if c.Status() != StatusReady || !c.settledOK.Load() {
		return false
	}
	// The view moves on the membership's goroutine before the placement
	// actor installs it: a settled flag of the view before says nothing
	// of the new one (TestReview9SettledIsNotStaleWhenTheViewMoves). A
	// view with the same hash has the same members and owners.
	topo, ok := c.Topology()
	return ok && topo.Hash == c.settledHash.Load()
}

// setStatus moves the status to s. Leaving only moves on to Stopped, and
// Stopped is final: a view or a tick the placement actor handles after
// Shutdown began changes nothing.
func (c *Cluster) setStatus(s Status) {
	var old Status
	for {
		old = Status(c.status.Load())
		if old == StatusStopped || (old == StatusLeaving && s != StatusStopped) {
			return
		}
		if c.status.CompareAndSwap(int32(old), int32(s)) {
			break
		}
	}
	if old != s {
		c.log.Debug("cluster: status", "from", old, "to", s)
		c.sys.EventStream().Publish(&ClusterStatusChanged{From: old, To: s, Member: c.Self().Key(), At: c.now()})
	}
}

// Self returns this member as registered with the provider (its current
// incarnation); the zero Member on a nil or detached Cluster.
func (c *Cluster) Self() Member {
	if c == nil || c.det != nil {
		return Member{}
	}
	return c.membership.Load().m.Self()
}

// Members returns the members of the current view (nil before the first):
// a copy, which the caller may change.
func (c *Cluster) Members() []Member {
	if c == nil {
		return nil
	}
	if v := c.view.Load(); v != nil {
		return cloneMembers(v.topo.Members)
	}
	return nil
}

// WaitForMembers blocks until this member is ready (StatusReady: its
// placement actor installed a view under a valid lease) with a view of at
// least n members, itself included, and returns nil; or until ctx ends
// (ctx's error), or the member is leaving or stopped (ErrShuttingDown).
// Requests work before that (they retry while members join), but a grain
// activated while the members did not yet see each other moves, losing
// its in-memory state, once they do: a program or test that starts its
// members together waits for them first. It takes n as it is: a member
// that joins and one that leaves can keep the count below n for good. A
// nil or detached Cluster has no members: ErrNotInstalled at once.
func (c *Cluster) WaitForMembers(ctx context.Context, n int) error {
	if c == nil {
		return ErrNotInstalled
	}
	if c.det != nil {
		return errDetachedMembers
	}
	changed := make(chan struct{}, 1)
	poke := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	sub := c.sys.EventStream().SubscribeWithPredicate(poke, func(e any) bool {
		switch e.(type) {
		case *TopologyChanged, *ClusterStatusChanged:
			return true
		}
		return false
	})
	defer c.sys.EventStream().Unsubscribe(sub)
	for {
		switch c.Status() {
		case StatusReady:
			if v := c.view.Load(); v != nil && len(v.topo.Members) >= n {
				return nil
			}
		case StatusLeaving, StatusStopped:
			return fmt.Errorf("%w: waiting for %d members", ErrShuttingDown, n)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("cluster: waiting for %d members (status %s, %d members): %w", n, c.Status(), len(c.Members()), ctx.Err())
		}
	}
}

// Topology returns the current view and whether there is one: a copy,
// which the caller may change.
func (c *Cluster) Topology() (Topology, bool) {
	if c == nil {
		return Topology{}, false
	}
	if v := c.view.Load(); v != nil {
		t := v.topo
		t.Members = cloneMembers(t.Members)
		return t, true
	}
	return Topology{}, false
}

// cloneMembers copies ms and each member's Kinds: what the runtime hands
// to user code (Members, Topology, TopologyChanged) must not share the
// view's slices, which the owner rings and the caller side read
// (TestClusterMembersAreCopies).
func cloneMembers(ms []Member) []Member {
	if ms == nil {
		return nil
	}
	out := make([]Member, len(ms))
	for i, m := range ms {
		m.Kinds = slices.Clone(m.Kinds)
		out[i] = m
	}
	return out
}

// IdentityLookup returns the identity lookup (the partition bridge, B1.3):
// the *PartitionIdentityLookup by default, or the one Config.IdentityLookup
// made; nil on a nil or detached Cluster. It is not safe for concurrent
// use: read it only for inspection.
func (c *Cluster) IdentityLookup() IdentityLookup {
	if c == nil {
		return nil
	}
	return c.lookup
}

// PidCache returns the lookup's PidCache, the member's only PID cache
// (L6); nil when a custom lookup has none, and on a nil or detached
// Cluster. It holds the PIDs of other
// members' grains: callers route to this member's own grains through the
// placement actor's table of its activations, which costs them no entry.
// Safe for concurrent use.
func (c *Cluster) PidCache() *PidCache {
	if c == nil {
		return nil
	}
	return c.cache
}

// setupLookup makes the identity lookup: Config.IdentityLookup's, given the
// runtime's Activator, or a PartitionIdentityLookup.
func (c *Cluster) setupLookup(lcfg LookupConfig, kinds []string) error {
	var err error
	if c.cfg.IdentityLookup != nil {
		c.lookup, err = c.cfg.IdentityLookup(c.activator)
		if err == nil && c.lookup == nil {
			err = invalidConfig("IdentityLookup returned no lookup")
		}
		c.custom = true
	} else {
		c.lookup, err = NewPartitionIdentityLookup(lcfg)
	}
	if err != nil {
		return err
	}
	setup := func() {
		if len(kinds) > 0 {
			err = c.lookup.SetupMember(kinds)
		} else {
			err = c.lookup.SetupClient(nil)
		}
	}
	if c.custom {
		// User code: a panic in its set-up fails Install.
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = invalidConfig("IdentityLookup panicked in its set-up: %v", r)
				}
			}()
			setup()
		}()
	} else {
		setup()
	}
	if cp, ok := c.lookup.(interface{ Cache() *PidCache }); ok {
		c.cache = cp.Cache()
	}
	return err
}

// withLookup runs fn, which calls the identity lookup, with lookupMu held.
// A custom lookup is user code: a panic in it ends fn there, is logged at
// Error, and the lock is released, instead of crashing the goroutine that
// called it (the membership goroutine, a tracked one) or leaving lookupMu
// held for good (TestClusterCustomLookupPanicsContained). A request's own
// resolution recovers its Get's panic as an error (activateOnce).
func (c *Cluster) withLookup(what string, fn func()) {
	c.lookupMu.Lock()
	defer c.lookupMu.Unlock()
	if c.custom {
		defer func() {
			if r := recover(); r != nil {
				c.log.Error("cluster: identity lookup panicked", "method", what, "panic", r)
			}
		}()
	}
	fn()
}

// publishLookupEvents drains the lookup's activation and PidCache events
// and publishes them on the EventStream (as *VirtualActorEvent and
// *PidCacheEvent). Call with lookupMu held.
func (c *Cluster) publishLookupEvents() {
	es := c.sys.EventStream()
	evs := c.lookup.DrainEvents()
	for _, ev := range evs {
		es.Publish(&ev) // a copy: the buffer goes back to the lookup below
	}
	ces := c.lookup.DrainCacheEvents()
	for _, ev := range ces {
		es.Publish(&ev)
	}
	if r, ok := c.lookup.(eventBufferReuser); ok {
		r.ReuseEventBuffers(evs, ces)
	}
}

// eventBufferReuser is an IdentityLookup that records its next events into
// the buffers already drained (PartitionIdentityLookup.ReuseEventBuffers).
type eventBufferReuser interface {
	ReuseEventBuffers([]VirtualActorEvent, []PidCacheEvent)
}

// ActiveCount returns the number of activations this member hosts (the
// virtual-actor gauge, B4.3); 0 on a nil Cluster.
func (c *Cluster) ActiveCount() int {
	if c == nil {
		return 0
	}
	return int(c.active.Load())
}

// ActiveCountByKind returns the number of activations this member hosts,
// by kind name (kinds without activations are absent). It is a snapshot
// taken without stopping the runtime, as ActiveCount is.
func (c *Cluster) ActiveCountByKind() map[string]int {
	n := map[string]int{}
	if c == nil {
		return n
	}
	for name, cnt := range c.byKind {
		if v := cnt.Load(); v > 0 {
			n[name] = int(v)
		}
	}
	return n
}

// activeChanged counts d activations of kind k more (spawned) or fewer
// (terminated).
func (c *Cluster) activeChanged(k *Kind, d int64) {
	c.active.Add(d)
	if cnt := c.byKind[k.name]; cnt != nil {
		cnt.Add(d)
	}
}

// Lease returns this incarnation's membership lease as its provider reports
// it (Membership.Lease); the zero MembershipLease on a nil or detached
// Cluster. It never blocks.
func (c *Cluster) Lease() MembershipLease {
	if c == nil || c.det != nil {
		return MembershipLease{}
	}
	return c.membership.Load().m.Lease()
}

// ViewState reports whether this member's view stream is live or stale
// (its provider not answering) and since when; the zero ViewState on a nil
// or detached Cluster. A stale view is also published (ViewWentStale,
// then ViewRestored) and logged.
func (c *Cluster) ViewState() ViewState {
	if c == nil || c.det != nil {
		return ViewState{}
	}
	return c.membership.Load().m.ViewState()
}

// System returns the actor system; nil on a nil Cluster.
func (c *Cluster) System() *actor.System {
	if c == nil {
		return nil
	}
	return c.sys
}

func (c *Cluster) now() time.Time { return c.sys.Clock().Now() }

// watchMembership consumes the membership's views and events until it ends,
// then (unless the cluster is shutting down) rejoins as a new incarnation.
func (c *Cluster) watchMembership(m Membership) {
	defer c.wg.Done()
	for {
		c.consume(m)
		select {
		case <-c.stop:
			return
		default:
		}
		if c.remoteGone.Load() {
			return // fenced for good: no rejoin at an address nobody can reach
		}
		next, ok := c.rejoin()
		if !ok {
			return
		}
		m = next
	}
}

func (c *Cluster) consume(m Membership) {
	snaps, events := m.Snapshots(), m.Events()
	for snaps != nil || events != nil {
		select {
		case t, ok := <-snaps:
			if !ok {
				snaps = nil
				continue
			}
			c.installView(t, m.Released())
			c.root.Send(c.placement, &viewMsg{topo: t, released: m.Released(), m: m})
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			c.onMembershipEvent(m, ev)
		case <-c.stop:
			return
		}
	}
}

// rejoin joins again with a new incarnation after the membership ended on
// its own (revoked, partitioned): the placement actor fenced already. It
// retries with backoff until it succeeds or the cluster shuts down.
func (c *Cluster) rejoin() (Membership, bool) {
	for attempt := 1; ; attempt++ {
		if c.remoteGone.Load() {
			return nil, false
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
		m, err := c.join(ctx)
		cancel()
		if err == nil && c.remoteGone.Load() {
			// The remote node ended during the Join: nobody can reach
			// this incarnation; end it as a crash would.
			sctx, scancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
			_ = m.Stop(sctx)
			scancel()
			c.lingerMembership(m)
			return nil, false
		}
		if err == nil {
			if !c.adoptRejoined(m) {
				return nil, false
			}
			c.log.Info("cluster: rejoined", "member", m.Self().Key())
			c.root.Send(c.placement, &rejoinMsg{m: m})
			return m, true
		}
		c.log.Warn("cluster: rejoin failed", "attempt", attempt, "err", err)
		if !c.wait(c.cfg.Retry.Delay(min(attempt, 16), c.rnd.Float64())) {
			return nil, false
		}
	}
}

// adoptRejoined makes m, a rejoin's new membership, the current one and
// reports true, unless Shutdown has begun: Shutdown leaves only the
// membership current when it began, so m is left here at once (its Join ran
// concurrently with Shutdown and would otherwise stay registered with the
// provider, seen by every other member until its lease expired) and false
// is reported.
func (c *Cluster) adoptRejoined(m Membership) bool {
	c.joinMu.Lock()
	begun := c.shutBegun
	if !begun {
		c.membership.Store(&membershipBox{m})
	}
	c.joinMu.Unlock()
	if !begun {
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
	defer cancel()
	if err := m.Leave(ctx); err != nil && !errors.Is(err, ErrMembershipEnded) {
		c.log.Warn("cluster: leaving a membership rejoined during shutdown failed", "member", m.Self().Key(), "err", err)
	}
	c.lingerMembership(m)
	c.log.Debug("cluster: rejoined during shutdown, left at once", "member", m.Self().Key())
	return false
}

// wait waits d on the system clock, or returns false when the cluster
// stops first.
func (c *Cluster) wait(d time.Duration) bool {
	done := make(chan struct{})
	cancel := c.sys.Clock().AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return true
	case <-c.stop:
		cancel()
		return false
	}
}

func (c *Cluster) onMembershipEvent(m Membership, ev MembershipEvent) {
	switch ev.Kind {
	case MembershipEventLeaseLost, MembershipEventLeaseRevoked:
		c.sys.EventStream().Publish(&LeaseLost{Member: m.Self().Key(), Err: ev.Err, At: c.now()})
		c.root.Send(c.placement, &tickMsg{})
	case MembershipEventViewStale:
		c.log.Warn("cluster: membership view stale, keeping the last view", "err", ev.Err)
		c.sys.EventStream().Publish(&ViewWentStale{Member: m.Self().Key(), Err: ev.Err, At: c.now()})
	case MembershipEventViewRestored:
		c.log.Info("cluster: membership view restored")
		c.sys.EventStream().Publish(&ViewRestored{Member: m.Self().Key(), At: c.now()})
	}
}

// installView publishes a new caller-side view: the ring over the members
// not blocked, the PidCache entries of absent members dropped (V3.5).
func (c *Cluster) installView(t Topology, _ []Member) {
	prev := c.view.Load()
	if prev != nil && prev.topo.Hash == t.Hash && t.Epoch <= prev.topo.Epoch {
		return
	}
	c.withLookup("UpdateTopology", func() {
		_ = c.lookup.UpdateTopology(t)
		if prev != nil {
			_, left := Diff(prev.topo, t)
			for _, m := range left {
				c.lookup.OnMemberLeft(m)
			}
		}
		c.publishLookupEvents()
	})
	c.viewMu.Lock()
	keys := c.remoteBlocked(t)
	c.blockMu.Lock()
	c.pruneBlockedLocked(t)
	for _, k := range keys {
		c.blocked[k] = struct{}{}
	}
	c.blockMu.Unlock()
	c.view.Store(&viewSnap{topo: t, ring: c.buildRing(t)})
	c.viewMu.Unlock()
	if prev != nil && prev.topo.Hash == t.Hash {
		return
	}
	var joined, left []Member
	if prev != nil {
		joined, left = Diff(prev.topo, t)
	} else {
		joined = t.Members
	}
	c.sys.EventStream().Publish(&TopologyChanged{Joined: cloneMembers(joined), Left: cloneMembers(left), Members: cloneMembers(t.Members), Epoch: t.Epoch, Hash: t.Hash, At: c.now()})
}

// pruneBlockedLocked drops the blocked keys of members that t does not
// have, as the placement core drops its own (placementCore.installView),
// with blockMu held. Nothing needs them: onBlockEvent looks only at the
// view's members, and a member that comes back with a key that remote's
// block list still names is marked again by installView (remoteBlocked),
// while one that remote no longer blocks must not stay out of owner
// selection. Kept, they would grow the set by a key per rejoin of a
// blocked member, each new incarnation having a new key
// (TestClusterBlockedKeysPrunedWhenMembersLeave).
func (c *Cluster) pruneBlockedLocked(t Topology) {
	if len(c.blocked) == 0 {
		return
	}
	present := make(map[string]struct{}, len(t.Members))
	for _, m := range t.Members {
		present[m.Key()] = struct{}{}
	}
	for k := range c.blocked {
		if _, ok := present[k]; !ok {
			delete(c.blocked, k)
		}
	}
}

func (c *Cluster) buildRing(t Topology) Ring {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	return c.strategy.Build(withoutBlocked(t, c.blocked, Member.Key))
}

// onBlockEvent applies remote's BlockList (B2.3, V1.4, V4.4). A blocked
// member of the view leaves owner selection here at once, its PidCache
// entries are dropped and the placement actor hands over what the block
// moves away; the member is evicted from the provider (when it supports
// Evictor), so every member sees it leave and it fences itself; and the
// other members are told, so each blocks it too. An unblocked member is
// eligible again.
func (c *Cluster) onBlockEvent(ev remote.BlockEvent) {
	c.viewMu.Lock()
	v := c.view.Load()
	if v == nil {
		c.viewMu.Unlock()
		return
	}
	var hit []Member
	for _, m := range v.topo.Members {
		for _, k := range ev.Keys {
			if m.ID == k || m.Address == k {
				hit = append(hit, m)
				break
			}
		}
	}
	c.viewMu.Unlock()
	if len(hit) == 0 {
		return
	}
	if !ev.Blocked {
		// A member the reachability vote keeps out stays out
		// (reachability.go): an unblock by hand lifts the hand's block
		// only.
		hit = slices.DeleteFunc(hit, func(m Member) bool { return c.isSuspended(m.Address) })
	}
	if !c.exclude(hit, ev.Blocked) {
		return
	}
	if !ev.Blocked {
		c.log.Info("cluster: block list update applied", "unblocked", len(hit))
		return
	}
	self := c.Self().Key()
	for _, m := range hit {
		c.evict(m)
		notice := &clusterpb.BlockNotice{MemberKey: m.Key(), MemberId: m.ID, Address: m.Address}
		for _, o := range v.topo.Members {
			if o.Key() != self && o.Key() != m.Key() {
				c.root.Send(actor.NewPID(o.Address, placementName), notice)
			}
		}
	}
	c.log.Info("cluster: block list update applied", "blocked", len(hit))
}

// exclude takes the members hit out of owner selection (excluded) or
// puts them back, on the caller side (the ring of the current view) and
// in the placement actor (blockMsg: it hands over the activations that
// move, and acknowledges the view to a member put back only once they
// have terminated). It reports whether the view was there to change.
func (c *Cluster) exclude(hit []Member, excluded bool) bool {
	if len(hit) == 0 {
		return false
	}
	c.viewMu.Lock()
	v := c.view.Load()
	if v == nil {
		c.viewMu.Unlock()
		return false
	}
	// Only members of the current view: a view installed since hit was
	// read may have dropped some, whose keys would stay in c.blocked.
	hit = slices.DeleteFunc(slices.Clone(hit), func(m Member) bool {
		return !slices.ContainsFunc(v.topo.Members, func(o Member) bool { return o.Key() == m.Key() })
	})
	if len(hit) == 0 {
		c.viewMu.Unlock()
		return false
	}
	if !excluded {
		// A member remote's block list names stays out, whoever puts it
		// back: checked under viewMu, which a hand Block's exclusion
		// takes after its key is in the list, so a lift racing it either
		// sees the key or is undone by it (TestReview15LiftRacingHandBlockKeepsTheHandBlock).
		bl := c.remote.BlockList()
		hit = slices.DeleteFunc(hit, func(m Member) bool { return bl.IsBlocked(m.ID, m.Address) }) // hit is exclude's own copy
		if len(hit) == 0 {
			c.viewMu.Unlock()
			return false
		}
	}
	c.blockMu.Lock()
	for _, m := range hit {
		if excluded {
			c.blocked[m.Key()] = struct{}{}
		} else {
			delete(c.blocked, m.Key())
		}
	}
	c.blockMu.Unlock()
	c.view.Store(&viewSnap{topo: v.topo, ring: c.buildRing(v.topo)})
	c.viewMu.Unlock()
	for _, m := range hit {
		c.root.Send(c.placement, &blockMsg{member: m, unblock: !excluded})
	}
	return true
}

// remoteBlocked returns the keys of t's members that remote's block list
// names (by member ID or address), as onBlockEvent matches them. A block
// event reaches only the members of the view of its time: a member blocked
// before this member's first view, or a blocked member's new incarnation
// (evicted, it rejoins at the same address, which remote still refuses), is
// left out of owner selection when a view brings it, on both the caller
// side (installView) and the placement core (placementActor.install), so
// the two rings agree.
func (c *Cluster) remoteBlocked(t Topology) []string {
	bl := c.remote.BlockList()
	var keys []string
	for _, m := range t.Members {
		if bl.IsBlocked(m.ID, m.Address) || c.isSuspended(m.Address) {
			keys = append(keys, m.Key())
		}
	}
	return keys
}

// isBlockedMember reports whether onBlockEvent took the member with this
// key out of owner selection.
func (c *Cluster) isBlockedMember(key string) bool {
	c.blockMu.Lock()
	defer c.blockMu.Unlock()
	_, ok := c.blocked[key]
	return ok
}

// invalidateMember drops the PidCache entries of m and returns how many.
// The placement actor calls it: a custom lookup's OnMemberLeft runs on a
// tracked goroutine, as for dropCachedNoWait.
func (c *Cluster) invalidateMember(key string, m Member) int {
	if c.custom {
		c.goTracked(func() {
			c.withLookup("OnMemberLeft", func() {
				c.lookup.OnMemberLeft(m)
				c.publishLookupEvents()
			})
		})
		return 0
	}
	return c.cache.InvalidateMember(key)
}

// lingerMembership records what m, a membership this cluster just left
// or stopped, may leave running: a Membership that implements
// extension.Lingerer (Consul's does: an agent request that has not seen
// its cancellation when Leave's ctx ended) tells when its goroutines have
// returned, and Terminated waits for that. Closed channels are dropped as
// new ones come (a member that fences and rejoins often keeps none).
func (c *Cluster) lingerMembership(m Membership) {
	ch := membershipTerminated(m)
	if ch == nil {
		return
	}
	c.goMu.Lock()
	defer c.goMu.Unlock()
	c.lingering = slices.DeleteFunc(c.lingering, await.Closed)
	c.lingering = append(c.lingering, ch)
}

// membershipTerminated is m's Terminated channel, or nil when m does not
// implement extension.Lingerer or its Terminated panicked (a provider's
// code: taken as nothing left running, as the extension registry does).
func membershipTerminated(m Membership) (ch <-chan struct{}) {
	l, ok := m.(extension.Lingerer)
	if !ok {
		return nil
	}
	defer func() {
		if recover() != nil {
			ch = nil
		}
	}()
	return l.Terminated()
}

// goTracked runs fn on a goroutine that Shutdown waits for, and reports
// false (running nothing) once Shutdown has begun waiting.
func (c *Cluster) goTracked(fn func()) bool {
	c.goMu.Lock()
	defer c.goMu.Unlock()
	if c.goClosed {
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		fn()
	}()
	return true
}

// evict asks the provider to remove a blocked member, in the background.
func (c *Cluster) evict(m Member) {
	ev, ok := c.cfg.Provider.(Evictor)
	if !ok {
		return
	}
	c.goTracked(func() {
		ctx, cancel := context.WithTimeout(c.ctx, c.cfg.RequestTimeout)
		defer cancel()
		if err := ev.Evict(ctx, m); err != nil {
			c.log.Warn("cluster: evicting a blocked member failed", "member", m.Key(), "err", err)
		}
	})
}

// Shutdown leaves the cluster gracefully (V2.5, B3.4, B3.5): new requests
// and activations fail with ErrShuttingDown; every activation is dropped
// from the PidCache and poisoned after its queued messages; their leases
// are released; the membership is left with a released marker so other
// members take over without the wait-out; then the runtime's goroutines
// end. When ctx ends before every grain stopped, Shutdown returns an error
// matching ErrShuttingDown and ends the membership without a released
// marker (the others then wait its lease out, as after a crash). The actor
// system calls it before remote shuts down. A rejoin in flight when
// Shutdown begins (after a self-fence) leaves its new incarnation as soon as
// its Join returns, and Shutdown waits for it (within ctx; Terminated
// after), so no incarnation stays registered. An earlier incarnation that
// fenced and is still being released (Retirer) gets one last attempt
// within ctx once every grain has stopped; when that fails too it is left
// for the provider to expire, as a crashed one is (logged at Warn; not an
// error of Shutdown). The wait for the cluster's own goroutines is bounded by ctx
// too (some run user code: a provider's Evict, a custom lookup's
// callbacks); Terminated closes when they have returned. Idempotent:
// later calls return the first call's result.
// On a nil Cluster it returns ErrNotInstalled.
func (c *Cluster) Shutdown(ctx context.Context) error {
	if c == nil {
		return ErrNotInstalled
	}
	if c.det != nil {
		return c.shutdownDetached()
	}
	c.shutOnce.Do(func() {
		c.joinMu.Lock()
		c.shutBegun = true // from here on c.membership does not change
		c.joinMu.Unlock()
		c.setStatus(StatusLeaving)
		done := make(chan struct{})
		c.root.Send(c.placement, &shutdownMsg{done: done})
		allStopped := true
		if err := await.Done(ctx, done); err != nil {
			allStopped = false
			c.shutErr = fmt.Errorf("%w: activations still stopping: %w", ErrShuttingDown, err)
		}
		close(c.stop)
		c.cancelCtx()
		for _, u := range c.unsub {
			u()
		}
		if m := c.membership.Load().m; m != nil {
			if allStopped {
				if err := m.Leave(ctx); err != nil && !errors.Is(err, ErrMembershipEnded) && c.shutErr == nil {
					c.shutErr = err
				}
				c.lingerMembership(m)
			} else {
				// Grains still run: a released marker would let others
				// activate them at once. Stop instead: the others wait
				// the lease out (T, then W).
				stopCtx, cancel := context.WithTimeout(context.Background(), c.cfg.RequestTimeout)
				_ = m.Stop(stopCtx)
				cancel()
				c.lingerMembership(m)
			}
		}
		if allStopped {
			c.retirePending(ctx)
		}
		c.goMu.Lock()
		c.goClosed = true
		c.goMu.Unlock()
		// The tracked goroutines have seen c.ctx end, but some run user
		// code (a custom lookup's OnMemberLeft, a provider's Evict) that
		// may not return: the wait for them is bounded by ctx, and
		// Terminated tells when they have returned. Before, Shutdown
		// waited for them for good, whatever ctx said
		// (TestClusterShutdownBoundedByStuckUserCode).
		go func() { //nolint: tracked by Terminated
			c.wg.Wait()
			// The memberships' own goroutines (after a Leave or Stop
			// cut short), recorded by the tracked goroutines and the
			// calls above.
			c.goMu.Lock()
			lingering := c.lingering
			c.goMu.Unlock()
			for _, ch := range lingering {
				<-ch
			}
			c.metrics.close()
			c.setStatus(StatusStopped)
			close(c.term)
		}()
		if err := await.Done(ctx, c.term); err != nil && c.shutErr == nil {
			c.shutErr = fmt.Errorf("%w: goroutines still running (a provider's Evict, a custom lookup's callback): %w", ErrShuttingDown, err)
		}
	})
	return c.shutErr
}

// Terminated implements extension.Lingerer: it returns a channel closed
// once the goroutines this cluster started have returned after Shutdown
// (it is closed when Shutdown returned nil, and open before Shutdown). The
// actor system waits for it in System.Terminated. A detached cluster
// starts none: nil.
func (c *Cluster) Terminated() <-chan struct{} {
	if c == nil || c.det != nil {
		return nil
	}
	return c.term
}
