package cluster

import (
	"math"
	"math/rand/v2"
	"time"
	"unicode/utf8"

	"github.com/fraktor-go/fraktor/actor"
)

// Kind is a grain kind: a name and the props its activations are spawned
// from. Build it with NewKind; a Kind is an immutable value.
type Kind struct {
	name  string
	props *actor.Props
	idle  time.Duration // 0: Config.IdleTimeout
	// messages of a typed grain's service (NewGrainKind), registered with
	// the remote serializers when the cluster is installed; nil otherwise.
	messages *GrainMessages
}

// KindOption configures a Kind in NewKind.
type KindOption interface{ applyKind(*Kind) }

type kindOptionFunc func(*Kind)

func (f kindOptionFunc) applyKind(k *Kind) { f(k) }

// WithIdleTimeout passivates an activation of the kind that received no
// message for d (L4); d < 0 never passivates. Without it the kind uses
// Config.IdleTimeout. Every message the grain receives counts, its own
// timers' ticks included: a grain with a periodic timer shorter than d is
// not passivated while the timer runs (cancel it, or call Passivate). A
// grain that waits is not idle either: while it has a deferred reply it has
// not sent (DeferReply) or a ReenterAfter continuation that has not run
// (called on the Context its Receive was given), it is not passivated, and
// its idle clock starts when the last of them ends. A continuation on a
// future that never completes keeps it active: give such futures a timeout.
func WithIdleTimeout(d time.Duration) KindOption {
	return kindOptionFunc(func(k *Kind) {
		if d < 0 {
			d = -1
		}
		k.idle = d
	})
}

// WithBlocking runs the kind's activations on the system's dedicated pool
// for actors that block (actor.WithBlocking; its size is
// actor.SystemConfig.BlockingWorkers): a grain whose Activated loads its
// state with blocking I/O, or whose methods call a blocking client, then
// never holds one of the shared workers that every other actor runs on.
// Its requests and replies are unchanged. NewKind's props may carry
// actor.WithBlocking already; this option is for kinds whose props the
// caller does not build (NewGrainKind, the generated XxxKind). A system
// with an external Dispatcher (actor.SystemConfig.Dispatcher) runs
// blocking actors on it too.
func WithBlocking() KindOption {
	return kindOptionFunc(func(k *Kind) {
		if k.props != nil {
			k.props = k.props.With(actor.WithBlocking())
		}
	})
}

// NewKind returns the kind name whose activations are spawned from props.
// Inside a grain, IdentityOf, FencingTokenOf and Passivate work on its
// Context; the grain receives actor.Started on activation and
// actor.Stopping on passivation or handover.
func NewKind(name string, props *actor.Props, opts ...KindOption) Kind {
	k := Kind{name: name, props: props}
	for _, o := range opts {
		o.applyKind(&k)
	}
	return k
}

// Name returns the kind's name.
func (k Kind) Name() string { return k.name }

// IdleTimeout returns the kind's own idle timeout (WithIdleTimeout): 0 when
// it uses Config.IdleTimeout, negative when it never passivates.
func (k Kind) IdleTimeout() time.Duration { return k.idle }

// LeaseTiming is what a Provider tells the runtime of its lease timing, so
// Config.Validate can check the single-activation relations. Providers that
// know it implement LeaseTimer.
type LeaseTiming struct {
	// RenewInterval R and RenewTimeout: how often, and how long one renewal
	// may take.
	RenewInterval, RenewTimeout time.Duration
	// FencePeriod F: a successful renewal guarantees membership for F from
	// the moment it was sent.
	FencePeriod time.Duration
	// LeaseTTL T: the backend drops a member no sooner than T after its
	// last successful renewal.
	LeaseTTL time.Duration
}

// LeaseTimer is an optional interface of a Provider: its lease timing.
type LeaseTimer interface {
	LeaseTiming() LeaseTiming
}

// Config configures the cluster extension (cluster.Install).
type Config struct {
	// Name is the cluster's name; members of other clusters are not
	// members of this one. It must equal remote's Config.SystemName, by
	// which the handshake refuses other clusters' nodes; empty means that
	// name, so it is set in one place. A Provider that names its cluster
	// (ClusterNamer: the Consul provider's Config.Cluster) must name it
	// the same.
	Name string
	// Provider is the membership backend: *MemoryRegistry, the Consul
	// provider, or another implementation (required).
	Provider Provider
	// Kinds are the grain kinds this member hosts. None makes a client-only
	// member: it calls grains and is never chosen as an owner.
	Kinds []Kind
	// MemberID names this member, stable across restarts; default the
	// remote node's advertised address.
	MemberID string
	// Weight is this member's weight under weighted rendezvous (Weighted);
	// 0 means 1.
	Weight uint32
	// Weighted selects weighted rendezvous hashing.
	Weighted bool
	// HashSeed seeds owner selection; 0 means DefaultHashSeed. It is never
	// logged or exported: an outsider who knows it can aim identities at
	// one member.
	HashSeed uint64

	// RequestTimeout bounds a request whose ctx has no deadline, and Send.
	// Default 5 s.
	RequestTimeout time.Duration
	// AttemptTimeout bounds the wait for the grain's reply in one attempt;
	// a timed-out attempt is retried (the message may then be processed
	// twice: grains that must not should deduplicate by a request ID).
	// Default: RequestTimeout (a slow grain is not retried); at most
	// RequestTimeout.
	AttemptTimeout time.Duration
	// ActivationTimeout bounds one activation request to an owner's
	// placement actor; a timed-out one is retried. Default 2 s.
	ActivationTimeout time.Duration
	// Retry is the retry policy of requests (V3.2). Default
	// DefaultRetryPolicy.
	Retry RetryPolicy
	// Rand is the source of the retry jitter; nil means a random seed.
	// Tests pass a seeded source to replay a run exactly.
	Rand rand.Source

	// IdleTimeout passivates activations of kinds without WithIdleTimeout
	// (L4, seed 000: 3600 s). Default 1 h.
	IdleTimeout time.Duration
	// PidCacheCapacity and PidCacheTTL size the PidCache (L4). Defaults
	// 1024 and 300 s.
	PidCacheCapacity int
	PidCacheTTL      time.Duration

	// StopBudget S: how long an activation may take to stop on passivation,
	// handover, fencing or shutdown. Default 500 ms.
	StopBudget time.Duration
	// MaxPause P: the longest stall of this process (GC, SIGSTOP, VM
	// pause) the guarantee covers. Default 500 ms.
	MaxPause time.Duration
	// ClockDrift ρ: the worst relative rate error between members' clocks,
	// in [0, 0.1). Default 0.01.
	ClockDrift float64
	// WaitOut W: how long a member that left the view without a released
	// marker must have been gone before its identities are activated
	// elsewhere. 0 means the least value that satisfies
	// W(1−ρ) ≥ (F+S+P)(1+ρ).
	WaitOut time.Duration
	// TickInterval is how often the placement actor checks idle
	// activations, stop deadlines and its lease, and re-sends its view
	// acknowledgement. Default 250 ms.
	TickInterval time.Duration

	// Reachability turns on the reachability vote: members suspend a member
	// that most of the cluster cannot connect to, though the provider
	// still lists it (a certificate the others refuse, a firewall, another
	// SystemName). Off by default (Reachability.After 0).
	Reachability ReachabilityConfig

	// IdentityLookup, when set, makes the member's identity lookup instead
	// of the PartitionIdentityLookup (seed 000's with_identity_lookup). It
	// is given the runtime's Activator, which asks an owner's placement
	// actor to activate an identity (blocking, at most ActivationTimeout,
	// and within Get's call no longer than the deadline of the request
	// that missed the cache).
	// The runtime serializes its calls (the IdentityLookup contract), calls
	// Get on a PidCache miss (the lookup's own cache, when it has a
	// Cache() *PidCache method), RemovePID when a PID proved stale, and
	// UpdateTopology/OnMemberLeft with every view; it publishes what
	// DrainEvents and DrainCacheEvents return. A lookup that activates
	// through the Activator keeps the single-activation guarantee: the
	// owner's placement actor decides.
	IdentityLookup func(activate Activator) (IdentityLookup, error)

	// Disabled creates no runtime and leaves the system unchanged (B1.4).
	Disabled bool
}

// ReachabilityConfig configures the reachability vote (docs/cluster.md,
// "Unreachable members"). Each member reports, in the view
// acknowledgement it sends every TickInterval, the members of its view to
// which its link has been down for After (every attempt to connect
// failed or was refused, none succeeded since; counted from when the
// member came in the view). Every member suspends a member that more than
// half of the view reports, counting its own report and those it received
// in the last 3 ticks: out of owner selection as a blocked member is,
// each such incarnation evicted from the provider (so its identities move
// behind the barrier), but not refused by remote: it is probed every tick,
// and the suspension is lifted once this member's link to it has come up
// and the vote no longer holds. So a member nobody reaches is suspended,
// a member that reaches nobody suspends nobody, and neither side of an
// even split (nor either member of two) suspends the other. Set it alike
// on every member.
type ReachabilityConfig struct {
	// After is how long this member's link to another member must have
	// been down before this member reports it. 0: no vote (default). At
	// least 2 TickIntervals when set.
	After time.Duration
}

// DefaultConfig returns a Config with every default filled in and no name,
// provider or kinds.
func DefaultConfig() Config {
	return Config{
		RequestTimeout:    5 * time.Second,
		ActivationTimeout: 2 * time.Second,
		Retry:             DefaultRetryPolicy(),
		IdleTimeout:       time.Hour,
		PidCacheCapacity:  1024,
		PidCacheTTL:       300 * time.Second,
		StopBudget:        500 * time.Millisecond,
		MaxPause:          500 * time.Millisecond,
		ClockDrift:        0.01,
		TickInterval:      250 * time.Millisecond,
	}
}

// withDefaults fills zero fields from DefaultConfig.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.RequestTimeout == 0 {
		c.RequestTimeout = d.RequestTimeout
	}
	if c.AttemptTimeout == 0 {
		c.AttemptTimeout = c.RequestTimeout
	}
	if c.ActivationTimeout == 0 {
		c.ActivationTimeout = d.ActivationTimeout
	}
	if c.Retry == (RetryPolicy{}) {
		c.Retry = d.Retry
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = d.IdleTimeout
	}
	if c.PidCacheCapacity == 0 {
		c.PidCacheCapacity = d.PidCacheCapacity
	}
	if c.PidCacheTTL == 0 {
		c.PidCacheTTL = d.PidCacheTTL
	}
	if c.StopBudget == 0 {
		c.StopBudget = d.StopBudget
	}
	if c.MaxPause == 0 {
		c.MaxPause = d.MaxPause
	}
	if c.ClockDrift == 0 {
		c.ClockDrift = d.ClockDrift
	}
	if c.TickInterval == 0 {
		c.TickInterval = d.TickInterval
	}
	if c.HashSeed == 0 {
		c.HashSeed = DefaultHashSeed
	}
	if c.WaitOut == 0 {
		if t, ok := c.Provider.(LeaseTimer); ok {
			c.WaitOut = minWaitOut(t.LeaseTiming().FencePeriod, c.StopBudget, c.MaxPause, c.ClockDrift)
		} else {
			c.WaitOut = minWaitOut(0, c.StopBudget, c.MaxPause, c.ClockDrift)
		}
	}
	return c
}

// minWaitOut is the least W with W(1−ρ) ≥ (F+S+P)(1+ρ), rounded up to a
// millisecond.
func minWaitOut(f, s, p time.Duration, rho float64) time.Duration {
	w := float64(f+s+p) * (1 + rho) / (1 - rho)
	return time.Duration(math.Ceil(w/float64(time.Millisecond))) * time.Millisecond
}

// Validate checks the config after defaults are applied: every error
// matches ErrInvalidConfig and names the field (B1.2). A non-empty Name
// must equal the Provider's ClusterName when it implements ClusterNamer
// (an empty one is checked by Install, once it is remote's SystemName).
// With a Provider
// that implements LeaseTimer it also checks the timing relations of the
// single-activation guarantee (docs/cluster.md):
//
//	R + renew timeout < F
//	(F + S)(1 + ρ) < T(1 − ρ)
//	W(1 − ρ) ≥ (F + S + P)(1 + ρ)
func (c Config) Validate() error {
	c = c.withDefaults()
	switch {
	case c.Provider == nil:
		return invalidConfig("Provider must be set")
	case c.RequestTimeout < 0:
		return invalidConfig("RequestTimeout %v must be > 0", c.RequestTimeout)
	case c.AttemptTimeout < 0 || c.AttemptTimeout > c.RequestTimeout:
		return invalidConfig("AttemptTimeout %v must be in (0, RequestTimeout %v]", c.AttemptTimeout, c.RequestTimeout)
	case c.ActivationTimeout < 0:
		return invalidConfig("ActivationTimeout %v must be > 0", c.ActivationTimeout)
	case c.IdleTimeout < 0:
		return invalidConfig("IdleTimeout %v must be > 0", c.IdleTimeout)
	case c.PidCacheCapacity < 0:
		return invalidConfig("PidCacheCapacity %d must be > 0", c.PidCacheCapacity)
	case c.PidCacheTTL < 0:
		return invalidConfig("PidCacheTTL %v must be > 0", c.PidCacheTTL)
	case c.StopBudget < 0:
		return invalidConfig("StopBudget %v must be > 0", c.StopBudget)
	case c.MaxPause < 0:
		return invalidConfig("MaxPause %v must be > 0", c.MaxPause)
	case !(c.ClockDrift > 0 && c.ClockDrift < 0.1):
		return invalidConfig("ClockDrift %v must be in (0, 0.1)", c.ClockDrift)
	case c.WaitOut < 0:
		return invalidConfig("WaitOut %v must be > 0", c.WaitOut)
	case c.TickInterval < 0:
		return invalidConfig("TickInterval %v must be > 0", c.TickInterval)
	case c.Reachability.After < 0 || c.Reachability.After > 0 && c.Reachability.After < 2*c.TickInterval:
		return invalidConfig("Reachability.After %v must be 0 (off) or at least 2 TickIntervals (%v)", c.Reachability.After, 2*c.TickInterval)
	}
	if err := c.Retry.Validate(); err != nil {
		return err
	}
	seen := make(map[string]struct{}, len(c.Kinds))
	for i, k := range c.Kinds {
		switch {
		case k.name == "":
			return invalidConfig("Kinds[%d] has an empty name", i)
		case !utf8.ValidString(k.name):
			// No identity of it would be valid (Identity.Validate).
			return invalidConfig("Kinds[%d] (%q): the name is not valid UTF-8", i, k.name)
		case k.props == nil:
			return invalidConfig("Kinds[%d] (%q) has no props", i, k.name)
		}
		if _, dup := seen[k.name]; dup {
			return invalidConfig("Kinds[%d]: kind %q given twice", i, k.name)
		}
		seen[k.name] = struct{}{}
	}
	if c.Name != "" {
		// An empty Name is remote's SystemName: Install checks it then.
		if err := checkProviderName(c.Provider, c.Name); err != nil {
			return err
		}
	}
	if t, ok := c.Provider.(LeaseTimer); ok {
		lt := t.LeaseTiming()
		rho := c.ClockDrift
		if lt.RenewInterval+lt.RenewTimeout >= lt.FencePeriod {
			return invalidConfig("Provider timing: RenewInterval %v + RenewTimeout %v must be < FencePeriod %v",
				lt.RenewInterval, lt.RenewTimeout, lt.FencePeriod)
		}
		if float64(lt.FencePeriod+c.StopBudget)*(1+rho) >= float64(lt.LeaseTTL)*(1-rho) {
			return invalidConfig("StopBudget %v: (FencePeriod %v + StopBudget)(1+ρ) must be < LeaseTTL %v (1−ρ)",
				c.StopBudget, lt.FencePeriod, lt.LeaseTTL)
		}
		if float64(c.WaitOut)*(1-rho) < float64(lt.FencePeriod+c.StopBudget+c.MaxPause)*(1+rho) {
			return invalidConfig("WaitOut %v: W(1−ρ) must be >= (FencePeriod %v + StopBudget %v + MaxPause %v)(1+ρ)",
				c.WaitOut, lt.FencePeriod, c.StopBudget, c.MaxPause)
		}
	}
	return nil
}

// idleFor returns the idle timeout of k under c (≤ 0: never).
func (c Config) idleFor(k Kind) time.Duration {
	if k.idle != 0 {
		return k.idle
	}
	return c.IdleTimeout
}
