package testkit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/scheduler"
)

// ClusterName is the cluster (and remote system) name of a TestCluster.
const ClusterName = "testkit"

// ClusterOption configures NewCluster.
type ClusterOption interface{ applyCluster(*clusterOptions) }

type clusterOptionFunc func(*clusterOptions)

func (f clusterOptionFunc) applyCluster(o *clusterOptions) { f(o) }

type clusterOptions struct {
	nodes       int
	kinds       []cluster.Kind
	tcp         bool
	virtual     bool
	registry    cluster.MemoryConfig
	registrySet bool // Registry
	tune        []func(*cluster.Config)
	remoteTune  []func(*remote.Config)
	serializers []func(*remote.Serializers) error
	system      []Option
	workers     int
	slack       time.Duration // LeaseSlack; 0 with slackSet false: none
	slackSet    bool
}

// Nodes sets how many members NewCluster starts (default 3).
func Nodes(n int) ClusterOption { return clusterOptionFunc(func(o *clusterOptions) { o.nodes = n }) }

// Kinds sets the grain kinds every member hosts.
func Kinds(kinds ...cluster.Kind) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.kinds = append(o.kinds, kinds...) })
}

// TCP makes members talk over real loopback TCP instead of the in-memory
// transport (faults are injected the same way).
func TCP() ClusterOption { return clusterOptionFunc(func(o *clusterOptions) { o.tcp = true }) }

// VirtualTime gives every member, the registry and the fault timers one
// virtual clock (scheduler.ManualClock) that moves only when the test
// moves it: TestCluster.Advance, and TestCluster.Eventually and
// AwaitConverged (NewCluster's included), which move it step by step
// while they wait. Workers and connections stay real goroutines, and a
// few deadlines stay on the wall clock (see virtual.go and
// docs/testing.md): a blocking Request waits in wall time while nothing
// moves the clock, so a test waits on a future with Eventually instead.
// The registry's timing is VirtualRegistry unless Registry or LeaseSlack
// says otherwise.
func VirtualTime() ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.virtual = true })
}

// Registry replaces the in-memory registry's timing (default FastRegistry,
// with VirtualTime VirtualRegistry). It replaces LeaseSlack's, and
// LeaseSlack replaces it: the last given counts.
func Registry(cfg cluster.MemoryConfig) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) {
		o.registry, o.registrySet, o.slack, o.slackSet = cfg, true, 0, false
	})
}

// LeaseSlack sets the registry's timing (in place of FastRegistry's, or
// Registry's) so that a member's lease renewal may run up to d late
// before the member fences itself: SlackRegistry(d, StopBudget, ρ) with
// the members' StopBudget and ClockDrift (after ConfigureCluster). With
// FastTiming a killed member's grains answer again some 2d + 0.9 s after
// the kill, or later by the requests' retry backoff (see SlackRegistry).
// A d that is not positive fails the test.
func LeaseSlack(d time.Duration) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.slack, o.slackSet, o.registrySet = d, true, false })
}

// ConfigureCluster adjusts every member's cluster.Config after the
// testkit's fast timing was applied (Name, Provider and Kinds are the
// testkit's).
func ConfigureCluster(f func(*cluster.Config)) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.tune = append(o.tune, f) })
}

// ConfigureRemote adjusts every member's remote.Config (ListenAddress,
// SystemName and Serializers are the testkit's; use Serializers).
func ConfigureRemote(f func(*remote.Config)) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.remoteTune = append(o.remoteTune, f) })
}

// Serializers registers the messages grains exchange across members, in
// every member's serializer registry (for example remote.RegisterJSON).
func Serializers(register func(*remote.Serializers) error) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.serializers = append(o.serializers, register) })
}

// SystemOptions adjusts every member's actor.SystemConfig (the Dispatcher,
// Clock, Name and Extensions fields are the testkit's).
func SystemOptions(opts ...Option) ClusterOption {
	return clusterOptionFunc(func(o *clusterOptions) { o.system = append(o.system, opts...) })
}

// DefaultLeaseSlack is how late a member's lease renewal may run in a
// TestCluster (FastRegistry) before the member fences itself. A renewal
// is a timer of the test process. On a 2-core machine beside 16 busy
// processes (load 10 to 26) the Go runtime of a race-built test ran a
// 100 ms timer up to about 0.5 s late in runs where no member fenced (up
// to 0.8 s, once 7 s, in runs where members fenced and rejoined, which
// loads the process further), and the 200 ms of slack of the earlier
// timing (fence period 400 ms) fenced members every few seconds: their
// grains stopped and calls failed, a flaky test in the user's repository
// (docs/testing.md). LeaseSlack changes it.
const DefaultLeaseSlack = 800 * time.Millisecond

// fastRenewInterval is a TestCluster's renewal interval R.
const fastRenewInterval = 100 * time.Millisecond

// FastRegistry is the registry timing of a TestCluster:
// SlackRegistry(DefaultLeaseSlack, 100 ms, 0.01) for FastTiming's stop
// budget and the default clock drift, that is renewals every 100 ms, a
// fence period of 1 s and leases of 1.25 s. A killed member is gone from
// the view within 1.25 s, and its grains answer elsewhere 2.5 to 4 s
// after the kill. It is the default on the system clock; VirtualTime's is
// VirtualRegistry.
func FastRegistry() cluster.MemoryConfig {
	return SlackRegistry(DefaultLeaseSlack, fastStopBudget, cluster.DefaultConfig().ClockDrift)
}

// SlackRegistry returns the registry timing that lets a member's renewal
// run up to slack late before the member fences, for members whose
// StopBudget is s and ClockDrift rho. A member fences when its lease is
// not valid past the stop budget, that is S before the deadline its last
// renewal gave (renewal + FencePeriod), and renews every RenewInterval R,
// so the slack is F − R − S: F = slack + R + S, with R = 100 ms. The
// lease TTL T must outlast the fence and the stop ((F + S)(1 + ρ) <
// T(1 − ρ), cluster.Config.Validate): T is the least such value plus R,
// rounded up to 50 ms. A killed member leaves the view T − R to T after
// the kill, and the others activate its grains after the wait-out W ≈
// (F + S + P)(1 + ρ)/(1 − ρ): failover in a test takes about T + W, some
// 2·slack + 4S + P + 3R, which is what the slack costs. A slack that is
// not positive is returned as 0 for all three durations, which
// cluster.MemoryConfig.Validate refuses.
func SlackRegistry(slack, s time.Duration, rho float64) cluster.MemoryConfig {
	if slack <= 0 || s < 0 || !(rho >= 0 && rho < 1) {
		return cluster.MemoryConfig{}
	}
	r := fastRenewInterval
	f := slack + r + s
	least := time.Duration(math.Ceil(float64(f+s) * (1 + rho) / (1 - rho)))
	const step = 50 * time.Millisecond
	t := (least + r + step - 1) / step * step
	return cluster.MemoryConfig{LeaseTTL: t, RenewInterval: r, FencePeriod: f}
}

// VirtualRegistry is the registry timing of a TestCluster with
// VirtualTime: leases of 600 ms renewed every 100 ms with a fence period
// of 400 ms, 200 ms of slack with FastTiming. That is enough there: the
// registry renews on the virtual clock, inside its Advance, so however
// late the machine runs the members' goroutines no renewal is late in
// virtual time, and failover takes half as long as with FastRegistry (a
// killed member's grain answers again 1.2 to 1.9 s of virtual time after
// the kill).
func VirtualRegistry() cluster.MemoryConfig {
	return cluster.MemoryConfig{LeaseTTL: 600 * time.Millisecond, RenewInterval: fastRenewInterval,
		FencePeriod: 400 * time.Millisecond}
}

// fastStopBudget is FastTiming's StopBudget S.
const fastStopBudget = 100 * time.Millisecond

// FastTiming is the cluster timing of a TestCluster, to match FastRegistry:
// S = P = 100 ms (so W = 1225 ms with FastRegistry's fence period of 1 s),
// ticks of 20 ms, activation requests of 300 ms and attempts of 500 ms.
func FastTiming(c *cluster.Config) {
	c.StopBudget = fastStopBudget
	c.MaxPause = 100 * time.Millisecond
	c.TickInterval = 20 * time.Millisecond
	c.ActivationTimeout = 300 * time.Millisecond
	c.AttemptTimeout = 500 * time.Millisecond
}

// MemberState is where a member of a TestCluster stands.
type MemberState int

// The member states.
const (
	MemberUp      MemberState = iota // running (possibly paused or partitioned)
	MemberKilled                     // Kill
	MemberStopped                    // Stop
)

// TestCluster is an in-process cluster for tests: members are actor
// systems with remote and the cluster extension, sharing one in-memory
// registry and one fault-injecting transport (in memory, or loopback TCP).
// Members are numbered from 0 in the order started (AddNode appends); a
// restarted member keeps its number. Cleanup shuts every member down; the
// package's goleak.VerifyTestMain checks that nothing is left. Methods are
// called from the test goroutine; Node and Observer are safe anywhere.
type TestCluster struct {
	t      testing.TB
	opts   clusterOptions
	clock  scheduler.Clock
	manual *scheduler.ManualClock
	reg    *cluster.MemoryRegistry
	net    *faultNet
	memNet *remote.MemoryNetwork
	obs    *Observer
	// settles counts settle's calls, settleTimeouts those that waited
	// all of settleWait (the test goroutine's).
	settles, settleTimeouts atomic.Int64

	mu      sync.Mutex
	members []*member
	// clocks are the member slots' clocks (SetClockRate), kept across
	// Restart.
	clocks map[int]*driftClock
}

type member struct {
	slot   int
	addr   string
	sys    *actor.System
	node   *remote.Node // sys's remote node (its Stats: settle)
	c      *cluster.Cluster
	coord  *scheduler.Coordinator
	pz     *pauser
	reg    *memberRegistry
	state  MemberState
	resume func() bool // the pending end of a Pause
	regCut bool        // PartitionRegistry holds a cut
	// regLatency is SlowRegistry's delay (nanoseconds) of this process's
	// registry calls.
	regLatency atomic.Int64
}

// NewCluster starts a test cluster (Nodes(3) by default) and waits until
// every member is ready with the same view, settled (AwaitConverged: with
// VirtualTime, moving the virtual clock until they are). See
// ClusterOption for the options.
func NewCluster(t testing.TB, opts ...ClusterOption) *TestCluster {
	t.Helper()
	o := clusterOptions{nodes: 3, registry: FastRegistry(), workers: 2}
	for _, op := range opts {
		op.applyCluster(&o)
	}
	if o.virtual && !o.registrySet && !o.slackSet {
		o.registry = VirtualRegistry()
	}
	if o.slackSet {
		if o.slack <= 0 {
			t.Fatalf("testkit: NewCluster: LeaseSlack %v must be positive", o.slack)
			return nil
		}
		ccfg := memberClusterConfig(o)
		o.registry = SlackRegistry(o.slack, ccfg.StopBudget, ccfg.ClockDrift)
	}
	tc := &TestCluster{t: t, opts: o}
	if o.virtual {
		tc.manual = scheduler.NewManualClock(time.Unix(0, 0))
		tc.clock = tc.manual
	} else {
		tc.clock = scheduler.SystemClock{}
	}
	rcfg := o.registry
	rcfg.Clock = tc.clock
	reg, err := cluster.NewMemoryRegistry(rcfg)
	if err != nil {
		t.Fatalf("testkit: NewCluster: %v", err)
		return nil
	}
	tc.reg = reg
	var inner remote.Transport = &remote.TCPTransport{}
	if !o.tcp {
		tc.memNet = remote.NewMemoryNetwork()
		inner = tc.memNet
	}
	tc.net = newFaultNet(inner, tc.clock, memberRemoteConfig(o).ReconnectBackoffMax+virtualStep)
	tc.obs = newObserver(tc.clock.Now)
	t.Cleanup(tc.cleanup)
	for range o.nodes {
		tc.AddNode()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := tc.AwaitConverged(ctx); err != nil {
		t.Fatalf("testkit: NewCluster: %v", err)
	}
	return tc
}

// Now returns the time of the cluster's clock (the one the Observer and
// every member use).
func (tc *TestCluster) Now() time.Time { return tc.clock.Now() }

// Advance moves the virtual clock by d (VirtualTime only), firing the
// timers due on the way, and returns how many fired.
func (tc *TestCluster) Advance(d time.Duration) int {
	if tc.manual == nil {
		tc.t.Fatalf("testkit: Advance needs VirtualTime()")
		return 0
	}
	return tc.manual.Advance(d)
}

// Observer returns the observer that watches every member.
func (tc *TestCluster) Observer() *Observer { return tc.obs }

// Registry returns the shared in-memory registry.
func (tc *TestCluster) Registry() *cluster.MemoryRegistry { return tc.reg }

// Len returns the number of member slots (every member ever started).
func (tc *TestCluster) Len() int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return len(tc.members)
}

func (tc *TestCluster) member(i int) *member {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if i < 0 || i >= len(tc.members) {
		tc.t.Fatalf("testkit: no member %d (have %d)", i, len(tc.members))
		return nil
	}
	return tc.members[i]
}

// Node returns member i's cluster (the current incarnation after a
// Restart). After Kill or Stop it returns the stopped one, whose calls fail
// with cluster.ErrShuttingDown.
func (tc *TestCluster) Node(i int) *cluster.Cluster { return tc.member(i).c }

// System returns member i's actor system.
func (tc *TestCluster) System(i int) *actor.System { return tc.member(i).sys }

// Address returns member i's remote address.
func (tc *TestCluster) Address(i int) string { return tc.member(i).addr }

// State returns member i's state; a member number out of range fails the
// test (and reports MemberStopped when the test goes on).
func (tc *TestCluster) State(i int) MemberState {
	m := tc.member(i)
	if m == nil {
		return MemberStopped
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	return m.state
}

// Paused reports whether member i is paused.
func (tc *TestCluster) Paused(i int) bool { return tc.member(i).pz.isPaused() }

// Up returns the numbers of the members that are running.
func (tc *TestCluster) Up() []int {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	var out []int
	for _, m := range tc.members {
		if m.state == MemberUp {
			out = append(out, m.slot)
		}
	}
	return out
}

// AddNode starts a new member and returns its number. It does not wait for
// the cluster to converge (AwaitConverged does).
func (tc *TestCluster) AddNode() int {
	tc.t.Helper()
	tc.mu.Lock()
	slot := len(tc.members)
	tc.mu.Unlock()
	m, err := tc.start(slot, "127.0.0.1:0")
	if err != nil {
		tc.t.Fatalf("testkit: start member %d: %v", slot, err)
		return slot
	}
	tc.mu.Lock()
	tc.members = append(tc.members, m)
	tc.mu.Unlock()
	return slot
}

// observerInstaller subscribes the observer before the cluster extension
// installs, so no activation of the member can be missed. toTrue maps the
// member's times (its events' At) to the cluster's clock.
type observerInstaller struct {
	obs    *Observer
	toTrue func(time.Time) time.Time
}

func (i observerInstaller) Name() string       { return "testkit.observer" }
func (i observerInstaller) Requires() []string { return nil }
func (i observerInstaller) Enabled() bool      { return true }
func (i observerInstaller) Validate() error    { return nil }
func (i observerInstaller) Install(_ context.Context, host actor.Host) (actor.Extension, error) {
	i.obs.watch(host.System(), i.toTrue)
	return noExtension{}, nil
}

type noExtension struct{}

func (noExtension) Shutdown(context.Context) error { return nil }

func (tc *TestCluster) start(slot int, addr string) (*member, error) {
	o := tc.opts
	local := tc.slotClock(slot)
	pz := &pauser{clockSrc: local}
	clock := pz.clock()
	coord := scheduler.NewCoordinator(scheduler.Config{Name: fmt.Sprintf("member%d", slot), Workers: o.workers, Clock: clock})
	coord.Start()
	pz.inner = coord
	mb := &member{slot: slot, coord: coord, pz: pz}
	mreg := &memberRegistry{reg: tc.reg, src: tc.clock, local: local, latency: &mb.regLatency}
	mb.reg = mreg
	tr := tc.net.member()

	ser := remote.NewSerializers()
	for _, f := range o.serializers {
		if err := f(ser); err != nil {
			tc.stopCoord(coord)
			return nil, err
		}
	}
	rcfg := memberRemoteConfig(o)
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = addr, ClusterName, ser

	ccfg := memberClusterConfig(o)
	ccfg.Name, ccfg.Provider, ccfg.Kinds = ClusterName, mreg, o.kinds

	scfg := actor.SystemConfig{EventBuffer: 1 << 16}
	for _, f := range o.system {
		f(&scfg)
	}
	scfg.Name, scfg.Dispatcher, scfg.Clock = ClusterName, pz, clock
	scfg.Extensions = []actor.ExtensionInstaller{
		observerInstaller{obs: tc.obs, toTrue: local.trueAt},
		remote.Install(rcfg, remote.WithTransport(tr)),
		cluster.Install(ccfg),
	}
	sys, err := actor.NewSystem(scfg)
	if err != nil {
		tc.stopCoord(coord)
		return nil, err
	}
	mb.addr, mb.sys, mb.node, mb.c = sys.Address(), sys, remote.Get(sys).Node(), cluster.Get(sys)
	return mb, nil
}

// slotClock returns member slot's clock, made on first use.
func (tc *TestCluster) slotClock(slot int) *driftClock {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.clocks == nil {
		tc.clocks = map[int]*driftClock{}
	}
	c := tc.clocks[slot]
	if c == nil {
		c = newDriftClock(tc.clock)
		tc.clocks[slot] = c
	}
	return c
}

// memberClusterConfig is a member's cluster config before its name,
// provider and kinds: the testkit's fast timing, then the options'
// ConfigureCluster. StopBudget and ClockDrift are filled in with the
// cluster's defaults when left 0, as the cluster fills them in.
func memberClusterConfig(o clusterOptions) cluster.Config {
	ccfg := cluster.Config{}
	FastTiming(&ccfg)
	for _, f := range o.tune {
		f(&ccfg)
	}
	d := cluster.DefaultConfig()
	if ccfg.StopBudget == 0 {
		ccfg.StopBudget = d.StopBudget
	}
	if ccfg.ClockDrift == 0 {
		ccfg.ClockDrift = d.ClockDrift
	}
	return ccfg
}

// virtualHeartbeatTimeout is remote's HeartbeatTimeout under
// VirtualTime. The pings that keep an idle connection alive go out on the
// member's clock (every HeartbeatInterval of virtual time), but the
// reader's deadline is wall time: with the second of the system-clock
// setting, a connection over which nothing passed for a second of wall
// time while the test did not move the clock was closed as dead
// ("nothing received for 1s"), under a cluster that was fine. A kill
// closes its connections at once (faultNet), so it does not wait for
// this; a partition's held connection is not closed by remote within a
// test's run (ConfigureRemote can set a shorter one).
const virtualHeartbeatTimeout = time.Hour

// memberRemoteConfig is a member's remote config before its address,
// system name and serializers: the testkit's fast timing, then the
// options' ConfigureRemote.
func memberRemoteConfig(o clusterOptions) remote.Config {
	rcfg := remote.DefaultConfig()
	rcfg.ReconnectBackoffMin = 5 * time.Millisecond
	rcfg.ReconnectBackoffMax = 100 * time.Millisecond
	rcfg.HeartbeatInterval = 100 * time.Millisecond
	rcfg.HeartbeatTimeout = time.Second
	if o.virtual {
		rcfg.HeartbeatTimeout = virtualHeartbeatTimeout
	}
	rcfg.GiveUpAfter = 2 * time.Second
	rcfg.DialTimeout = time.Second
	rcfg.HandshakeTimeout = time.Second
	for _, f := range o.remoteTune {
		f(&rcfg)
	}
	return rcfg
}

func (tc *TestCluster) stopCoord(c *scheduler.Coordinator) {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = c.Shutdown(ctx)
}

// shutdown ends member m's process: its system, then its worker pool; the
// observer closes what it still saw running there.
func (tc *TestCluster) shutdown(m *member, graceful bool) error {
	tc.resumeMember(m)
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := m.sys.Shutdown(ctx)
	tc.stopCoord(m.coord)
	tc.obs.memberDown(m.addr, tc.clock.Now())
	if !graceful {
		return nil // a killed member's leave fails (it is cut off): expected
	}
	return err
}

// Kill stops member i abruptly, as a crashed process: its connections drop
// at once, it renews its lease no more (the registry drops it when the
// lease expires, and the others take over its grains after the wait-out),
// and it never rejoins. Its grains end with it.
func (tc *TestCluster) Kill(i int) {
	tc.t.Helper()
	m := tc.member(i)
	if m.state != MemberUp {
		return
	}
	tc.setState(m, MemberKilled)
	m.reg.kill()
	tc.net.isolate(m.addr)
	_ = tc.shutdown(m, false)
}

// Stop shuts member i down gracefully: it hands its grains over and leaves
// with a released marker.
func (tc *TestCluster) Stop(i int) {
	tc.t.Helper()
	m := tc.member(i)
	if m.state != MemberUp {
		return
	}
	if m.regCut {
		m.regCut = false
		m.reg.heal()
	}
	tc.setState(m, MemberStopped)
	if err := tc.shutdown(m, true); err != nil {
		tc.t.Errorf("testkit: Stop(%d): %v", i, err)
	}
}

func (tc *TestCluster) setState(m *member, s MemberState) {
	tc.mu.Lock()
	m.state = s
	tc.mu.Unlock()
}

// Restart starts member i again (killing it first if it runs) as a new
// incarnation with the same member ID: on its old address when that can be
// bound again, on a new one otherwise. Faults injected on the old process
// (partitions, link delays, registry cut, SlowRegistry) are gone; its
// clock's rate and offset stay (SetClockRate).
func (tc *TestCluster) Restart(i int) {
	tc.t.Helper()
	old := tc.member(i)
	if old.state == MemberUp {
		tc.Kill(i)
	}
	tc.net.rejoin(old.addr)
	m, err := tc.start(i, old.addr)
	if err != nil {
		m, err = tc.start(i, "127.0.0.1:0")
	}
	if err != nil {
		tc.t.Fatalf("testkit: Restart(%d): %v", i, err)
		return
	}
	tc.mu.Lock()
	tc.members[i] = m
	tc.mu.Unlock()
}

// Partition cuts the link between members i and j both ways: connections
// between them carry nothing and new ones are refused until Heal.
func (tc *TestCluster) Partition(i, j int) {
	a, b := tc.member(i).addr, tc.member(j).addr
	tc.net.setCut(a, b, true)
	tc.net.setCut(b, a, true)
}

// PartitionOneWay cuts what member from sends to member to (to's traffic
// to from still flows on an existing connection; new ones are refused).
func (tc *TestCluster) PartitionOneWay(from, to int) {
	tc.net.setCut(tc.member(from).addr, tc.member(to).addr, true)
}

// Heal restores the link between i and j, both ways; held bytes flow on.
func (tc *TestCluster) Heal(i, j int) {
	a, b := tc.member(i).addr, tc.member(j).addr
	tc.net.setCut(a, b, false)
	tc.net.setCut(b, a, false)
}

// Disconnect resets the connections between members i and j: every one
// of them closes at once, both ends, as a connection reset would (a NAT or
// load balancer dropping it, an RST), so what was in flight on them (in
// socket buffers, in a write the partition held) is lost; the members
// reconnect as remote does after any connection loss, at once unless the
// link is cut. It returns how many connection ends it closed (each
// connection has two, one at each member).
func (tc *TestCluster) Disconnect(i, j int) int {
	return tc.net.reset(tc.member(i).addr, tc.member(j).addr)
}

// DelayLink adds latency d to the link between members i and j, both
// ways, from now on (d ≤ 0 lifts it): every byte either writes to the
// other is delivered d later on the cluster's clock, in order (a write
// returns at once, as into a socket buffer). Bytes written before the
// change keep their delivery time, and bytes written after a lift still
// come after those held. A cut (Partition) holds delayed bytes too, from
// the moment they fall due. Restart lifts the delays of the restarted
// member's links.
func (tc *TestCluster) DelayLink(i, j int, d time.Duration) {
	a, b := tc.member(i).addr, tc.member(j).addr
	tc.net.setDelay(a, b, d)
	tc.net.setDelay(b, a, d)
}

// DelayLinkOneWay adds latency d to what member from sends to member to
// (see DelayLink); what to sends to from is not delayed.
func (tc *TestCluster) DelayLinkOneWay(from, to int, d time.Duration) {
	tc.net.setDelay(tc.member(from).addr, tc.member(to).addr, d)
}

// PartitionRegistry cuts member i off the registry: its renewals fail (it
// fences when its lease runs short), it gets no views and cannot rejoin
// until HealRegistry; the others see it until its lease expires there.
func (tc *TestCluster) PartitionRegistry(i int) {
	m := tc.member(i)
	if m.regCut || m.state != MemberUp {
		return
	}
	m.regCut = true
	m.reg.cut()
}

// HealRegistry ends PartitionRegistry(i).
func (tc *TestCluster) HealRegistry(i int) {
	m := tc.member(i)
	if !m.regCut {
		return
	}
	m.regCut = false
	m.reg.heal()
}

// Pause stalls member i for d on the cluster's clock, as a stop-the-world
// pause (GC, SIGSTOP) would: no actor of it runs and none of its timers
// fires (both are held and run when the pause ends), and it renews its
// lease with the registry no more. Its sockets still receive. Pause
// returns at once; Resume ends the pause early. A pause longer than the
// cluster's MaxPause P is outside what the single-activation guarantee
// covers (fencing tokens still protect storage).
func (tc *TestCluster) Pause(i int, d time.Duration) {
	m := tc.member(i)
	if m.state != MemberUp || m.pz.isPaused() {
		return
	}
	m.reg.cut()
	m.pz.pause()
	tc.mu.Lock()
	m.resume = tc.clock.AfterFunc(d, func() { tc.resumeMember(m) })
	tc.mu.Unlock()
}

// SetClockRate makes member i's clock run at rate relative to the
// cluster's clock (the true one, system or virtual, which the registry,
// the Observer and the fault network keep) from now on: its Now advances
// rate times as fast, and its timers (actor timers, ticks, lease checks,
// the wait-out, remote's) fire after d/rate of true time. A rate of
// 1 + δ is a clock-rate error δ; the single-activation guarantee covers
// |δ| ≤ cluster.Config.ClockDrift ρ (docs/cluster.md, "Timing
// parameters"). The member's time stays continuous: only its rate
// changes, and the offset it built up stays. The member sees its lease in
// its own time: a renewal sent at its local time s guarantees it until
// s + F on its clock. A timer set before the change is re-armed to fire
// when Now reaches its deadline. The clock belongs to the slot: a
// restarted member keeps its rate and offset (the machine's clock
// outlives the process). Pause's d
// stays on the cluster's clock. A rate that is not positive and finite
// fails the test.
func (tc *TestCluster) SetClockRate(i int, rate float64) {
	tc.t.Helper()
	if !(rate > 0) || math.IsInf(rate, 0) {
		tc.t.Fatalf("testkit: SetClockRate(%d, %v): the rate must be positive and finite", i, rate)
		return
	}
	if tc.member(i) == nil {
		return
	}
	tc.slotClock(i).setRate(rate)
}

// ClockRate returns the rate of member i's clock (1 unless SetClockRate
// changed it).
func (tc *TestCluster) ClockRate(i int) float64 {
	if tc.member(i) == nil {
		return 1
	}
	return tc.slotClock(i).rate()
}

// SlowRegistry makes member i's registry calls take d on the cluster's
// clock from now on (0 ends it): a Join (its rejoin after fencing) and
// an Evict reach the registry d after the call, and the answer to each
// lease renewal reaches the member d after the renewal was sent, so
// until then its lease stands where the previous answered renewal put it
// (the renewal time plus F: it fences earlier, never later). Within R +
// d + S < F (with drift, F measured on its clock) no member fences for
// it; beyond, a member fences while the registry still holds it. The
// views the registry publishes reach it d late, in order (Latest too);
// lease events are not delayed. It ends with the process (Kill, Stop,
// Restart).
func (tc *TestCluster) SlowRegistry(i int, d time.Duration) {
	m := tc.member(i)
	if m == nil {
		return
	}
	m.regLatency.Store(int64(max(d, 0)))
}

// Resume ends a Pause of member i now.
func (tc *TestCluster) Resume(i int) { tc.resumeMember(tc.member(i)) }

func (tc *TestCluster) resumeMember(m *member) {
	tc.mu.Lock()
	stop := m.resume
	m.resume = nil
	tc.mu.Unlock()
	if stop != nil {
		stop()
	}
	if !m.pz.isPaused() {
		return
	}
	m.reg.heal()
	m.pz.resume()
}

func (tc *TestCluster) cleanup() {
	tc.mu.Lock()
	ms := append([]*member(nil), tc.members...)
	tc.mu.Unlock()
	for _, m := range ms {
		if m == nil {
			continue
		}
		tc.resumeMember(m)
		if m.regCut {
			m.regCut = false
			m.reg.heal()
		}
	}
	var wg sync.WaitGroup
	for _, m := range ms {
		if m == nil || m.state != MemberUp {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tc.shutdown(m, true); err != nil && !errors.Is(err, cluster.ErrShuttingDown) {
				tc.t.Errorf("testkit: member %d shutdown: %v", m.slot, err)
			}
			tc.setState(m, MemberStopped)
		}()
	}
	wg.Wait()
	tc.reg.Close()
}

// Request sends msg to the grain id through node and waits for its reply of
// type T, as cluster.Request does; without a ctx deadline it is bounded by
// DefaultTimeout.
func Request[T any](ctx context.Context, node *cluster.Cluster, id cluster.Identity, msg any) (T, error) {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultTimeout)
		defer cancel()
	}
	return cluster.Request[T](ctx, node, id, msg)
}
