package cluster

import (
	"errors"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingStrategy counts ring builds, to observe reuse (B2.2).
type countingStrategy struct {
	HashStrategy
	builds int
}

func (c *countingStrategy) Build(t Topology) Ring { c.builds++; return c.HashStrategy.Build(t) }

type lookupFixture struct {
	*PartitionIdentityLookup
	members []Member
	topo    Topology
}

func newLookup(t *testing.T, n int, opts ...LookupOption) lookupFixture {
	t.Helper()
	cfg := DefaultLookupConfig()
	p, err := NewPartitionIdentityLookup(cfg, opts...)
	require.NoError(t, err)
	ms := testMembers(n, "user", "cart")
	topo := NewTopology(1, ms)
	require.NoError(t, p.UpdateTopology(topo))
	return lookupFixture{PartitionIdentityLookup: p, members: ms, topo: topo}
}

func eventKinds(ev []VirtualActorEvent) []VirtualActorEventKind {
	out := make([]VirtualActorEventKind, len(ev))
	for i, e := range ev {
		out[i] = e.Kind
	}
	return out
}

func TestLookupConfigValidate(t *testing.T) {
	assert.NoError(t, DefaultLookupConfig().Validate())
	d := DefaultLookupConfig()
	assert.Equal(t, 1024, d.CacheCapacity)
	assert.Equal(t, 300*time.Second, d.PIDTTL)
	assert.Equal(t, 3600*time.Second, d.IdleTTL)
	bad := map[string]func(*LookupConfig){
		"capacity": func(c *LookupConfig) { c.CacheCapacity = 0 },
		"pid ttl":  func(c *LookupConfig) { c.PIDTTL = -1 },
		"idle ttl": func(c *LookupConfig) { c.IdleTTL = c.PIDTTL - 1 },
		"events":   func(c *LookupConfig) { c.CacheEventCapacity = -1 },
	}
	for name, mutate := range bad {
		t.Run(name, func(t *testing.T) {
			cfg := DefaultLookupConfig()
			mutate(&cfg)
			_, err := NewPartitionIdentityLookup(cfg)
			assert.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestLookupSetup(t *testing.T) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	assert.NoError(t, p.SetupMember([]string{"user", "cart"}))
	assert.ErrorIs(t, p.SetupMember([]string{"user", ""}), ErrInvalidKinds)
	assert.ErrorIs(t, p.SetupClient([]string{"user", "user"}), ErrInvalidKinds)
	assert.NoError(t, p.SetupClient(nil))

	_, err = p.Get(NewIdentity("user", "1"), t0)
	assert.ErrorIs(t, err, ErrNoAuthority, "no view yet (L5)")
	require.NoError(t, p.UpdateTopology(NewTopology(1, nil)))
	_, err = p.Get(NewIdentity("user", "1"), t0)
	assert.ErrorIs(t, err, ErrNoAuthority, "empty view (L5)")
}

// Seed 000 unit 1: get miss, then hit (L2).
func TestLookupGetMissThenHit(t *testing.T) {
	f := newLookup(t, 3)
	id := NewIdentity("user", "alice")
	pid, err := f.Get(id, t0)
	require.NoError(t, err)
	owner, err := NewRendezvous(DefaultHashConfig()).Build(f.topo).Owner(id)
	require.NoError(t, err)
	assert.Equal(t, actor.NewPID(owner.Address, "partition-activator/user/alice").Key(), pid.Key())
	ev := f.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, VirtualActorEvent{Kind: VirtualActorActivated, Identity: id, PID: pid, Owner: owner.Key()}, ev[0])

	again, err := f.Get(id, t0.Add(time.Second))
	require.NoError(t, err)
	assert.Same(t, pid, again)
	assert.Empty(t, f.DrainEvents(), "cache hit records no event")
	assert.Zero(t, testing.AllocsPerRun(100, func() { _, _ = f.Get(id, t0) }), "cache hit allocates nothing")

	// Past the PID TTL the registry answers: a Hit event, same PID.
	later, err := f.Get(id, t0.Add(301*time.Second))
	require.NoError(t, err)
	assert.Same(t, pid, later)
	assert.Equal(t, []VirtualActorEventKind{VirtualActorHit}, eventKinds(f.DrainEvents()))

	_, err = f.Get(NewIdentity("nope", "x"), t0)
	assert.ErrorIs(t, err, ErrNoSuchKind)
	_, err = f.Get(Identity{Kind: "user"}, t0)
	assert.ErrorIs(t, err, ErrInvalidIdentity)
}

// Seed 000 unit 2: remove.
func TestLookupRemovePID(t *testing.T) {
	f := newLookup(t, 3)
	id := NewIdentity("user", "bob")
	pid, err := f.Get(id, t0)
	require.NoError(t, err)
	f.DrainEvents()

	f.RemovePID(id)
	assert.Zero(t, f.Len())
	assert.Equal(t, []PidCacheEvent{{Identity: id, PID: pid, Member: f.DrainEvents0Owner(t, id), Reason: CacheRemoved}}, f.DrainCacheEvents())
	_, ok := f.Cache().Get(id, t0)
	assert.False(t, ok)

	_, err = f.Get(id, t0)
	require.NoError(t, err)
	assert.Equal(t, []VirtualActorEventKind{VirtualActorActivated}, eventKinds(f.DrainEvents()), "fresh activation after remove")
}

// DrainEvents0Owner returns the member key that owns id in f's view.
func (f lookupFixture) DrainEvents0Owner(t *testing.T, id Identity) string {
	t.Helper()
	m, err := NewRendezvous(DefaultHashConfig()).Build(f.topo).Owner(id)
	require.NoError(t, err)
	return m.Key()
}

// Seed 000 unit 3: update topology invalidates absent members' entries and
// moves identities whose owner changed (L3, V1.1, V3.5); an unchanged view is
// reused (B2.2).
func TestLookupUpdateTopology(t *testing.T) {
	strategy := &countingStrategy{HashStrategy: NewRendezvous(DefaultHashConfig())}
	f := newLookup(t, 4, WithHashStrategy(strategy))
	ids := testIdentities(200, "user")
	owners := map[Identity]string{}
	for _, id := range ids {
		_, err := f.Get(id, t0)
		require.NoError(t, err)
	}
	for _, e := range f.DrainEvents() {
		owners[e.Identity] = e.Owner
	}
	require.Equal(t, 1, strategy.builds)

	require.NoError(t, f.UpdateTopology(NewTopology(1, f.members)), "same view again")
	assert.Equal(t, 1, strategy.builds, "unchanged hash reuses the ring (B2.2)")
	assert.Empty(t, f.DrainEvents())

	// Member 0 leaves, a new member joins.
	joined := testMembers(5, "user", "cart")[4]
	next := NewTopology(2, append([]Member{joined}, f.members[1:]...))
	require.NoError(t, f.UpdateTopology(next))
	assert.Equal(t, 2, strategy.builds)
	ring := NewRendezvous(DefaultHashConfig()).Build(next)

	var invalidated, moved []Identity
	for _, e := range f.DrainEvents() {
		switch e.Kind {
		case VirtualActorInvalidated:
			invalidated = append(invalidated, e.Identity)
			assert.Equal(t, f.members[0].Key(), e.Owner)
		case VirtualActorMoved:
			moved = append(moved, e.Identity)
			m, err := ring.Owner(e.Identity)
			require.NoError(t, err)
			assert.Equal(t, joined.ID, m.ID, "only the newcomer takes identities")
		default:
			t.Fatalf("unexpected event %v", e)
		}
	}
	for _, id := range ids {
		if owners[id] == f.members[0].Key() {
			assert.Contains(t, invalidated, id)
		}
	}
	assert.NotEmpty(t, invalidated)
	assert.NotEmpty(t, moved)
	assert.Equal(t, len(ids)-len(invalidated), f.Len())

	cacheEv := f.DrainCacheEvents()
	reasons := map[CacheDropReason]int{}
	for _, e := range cacheEv {
		reasons[e.Reason]++
	}
	assert.Equal(t, map[CacheDropReason]int{CacheOwnerMoved: len(moved), CacheMemberAbsent: len(invalidated)}, reasons)

	// The next Get of a moved identity reactivates it on the newcomer.
	pid, err := f.Get(moved[0], t0)
	require.NoError(t, err)
	assert.Equal(t, joined.Address, pid.Address)
	ev := f.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, VirtualActorReactivated, ev[0].Kind)
	assert.Equal(t, joined.Key(), ev[0].Owner)

	assert.ErrorIs(t, f.UpdateTopology(NewTopology(1, f.members)), ErrStaleView)
}

// Seed 000 unit 4: member left (L3, V3.5).
func TestLookupOnMemberLeft(t *testing.T) {
	f := newLookup(t, 3)
	ids := testIdentities(60, "cart")
	for _, id := range ids {
		_, err := f.Get(id, t0)
		require.NoError(t, err)
	}
	byOwner := map[string][]Identity{}
	for _, e := range f.DrainEvents() {
		byOwner[e.Owner] = append(byOwner[e.Owner], e.Identity)
	}
	left := f.members[1]
	f.OnMemberLeft(left)
	ev := f.DrainEvents()
	assert.Len(t, ev, len(byOwner[left.Key()]))
	for _, e := range ev {
		assert.Equal(t, VirtualActorInvalidated, e.Kind)
		assert.Equal(t, left.Key(), e.Owner)
	}
	cev := f.DrainCacheEvents()
	assert.ElementsMatch(t, byOwner[left.Key()], eventIdentities(cev))
	for _, e := range cev {
		assert.Equal(t, CacheMemberLeft, e.Reason)
	}
	assert.Equal(t, len(ids)-len(byOwner[left.Key()]), f.Len())
	for _, id := range byOwner[f.members[0].Key()] {
		_, ok := f.Cache().Get(id, t0)
		assert.True(t, ok, "other members' entries stay")
	}
}

// Seed 000 unit 5: passivate idle.
func TestLookupPassivateIdle(t *testing.T) {
	f := newLookup(t, 2)
	old, fresh := NewIdentity("user", "old"), NewIdentity("user", "fresh")
	_, err := f.Get(old, t0)
	require.NoError(t, err)
	_, err = f.Get(fresh, t0.Add(30*time.Minute))
	require.NoError(t, err)
	f.DrainEvents()

	f.PassivateIdle(t0.Add(time.Hour-time.Second), time.Hour)
	assert.Empty(t, f.DrainEvents(), "nothing idle for an hour yet")
	f.PassivateIdle(t0.Add(time.Hour), f.Config().IdleTTL)
	ev := f.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, VirtualActorPassivated, ev[0].Kind)
	assert.Equal(t, old, ev[0].Identity)
	cev := f.DrainCacheEvents()
	require.Len(t, cev, 1)
	assert.Equal(t, CachePassivated, cev[0].Reason)
	assert.Equal(t, 1, f.Len())
}

// Local activations hold a lease; the activator gets its fencing token; a
// failing activator gives a typed error and releases the lease.
func TestLookupLocalActivationLease(t *testing.T) {
	ms := testMembers(1, "user")
	var reqs []ActivationRequest
	fail := false
	activator := func(req ActivationRequest) (*actor.PID, error) {
		reqs = append(reqs, req)
		if fail {
			return nil, errors.New("spawn failed")
		}
		return actor.NewPID(req.Owner.Address, "grain-"+req.Identity.ID), nil
	}
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig(), WithSelf(ms[0].ID), WithActivator(activator))
	require.NoError(t, err)
	require.NoError(t, p.SetupMember([]string{"user"}))
	topo := NewTopology(4, ms)
	require.NoError(t, p.UpdateTopology(topo))

	id := NewIdentity("user", "1")
	pid, err := p.Get(id, t0)
	require.NoError(t, err)
	assert.Equal(t, "grain-1", pid.ID)
	require.Len(t, reqs, 1)
	assert.True(t, reqs[0].Local)
	assert.Equal(t, FencingToken{Epoch: 4, Seq: reqs[0].Lease.Token.Seq}, reqs[0].Lease.Token)
	assert.Equal(t, topo.Hash, reqs[0].TopologyHash)
	require.NoError(t, p.Ledger().CheckToken(id, reqs[0].Lease.Token))
	ev := p.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, reqs[0].Lease.LeaseID, ev[0].LeaseID)
	assert.Equal(t, reqs[0].Lease.Token, ev[0].Token)

	fail = true
	bad := NewIdentity("user", "2")
	_, err = p.Get(bad, t0)
	var af *ActivationFailedError
	require.ErrorAs(t, err, &af)
	assert.Equal(t, bad, af.Key)
	assert.ErrorIs(t, err, ErrActivationFailed)
	_, held := p.Ledger().Lookup(bad)
	assert.False(t, held, "failed activation released its lease")
	assert.Empty(t, p.DrainEvents())

	// The runtime holds the lease of "3" elsewhere: the lookup refuses.
	fail = false
	busy := NewIdentity("user", "3")
	_, err = p.Ledger().Acquire(busy, ms[0].ID, topo.Hash)
	require.NoError(t, err)
	_, err = p.Get(busy, t0)
	assert.ErrorIs(t, err, ErrActivationFailed)
	assert.ErrorIs(t, err, ErrLeaseHeld)

	// Passivation releases the lease.
	p.PassivateIdle(t0.Add(time.Hour), time.Hour)
	_, held = p.Ledger().Lookup(id)
	assert.False(t, held)

	// A kind this member did not set up is not activated here.
	require.NoError(t, p.SetupMember([]string{"cart"}))
	_, err = p.Get(NewIdentity("user", "4"), t0)
	assert.ErrorIs(t, err, ErrNoSuchKind)
}

// V1.4, B2.3: blocking a member revokes its leases, drops its records and
// cached PIDs and takes it out of owner selection.
func TestLookupBlockMember(t *testing.T) {
	ms := testMembers(3, "user")
	ledger := NewActivationLedger()
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig(), WithSelf(ms[2].ID), WithLedger(ledger))
	require.NoError(t, err)
	require.NoError(t, p.SetupMember([]string{"user"}))
	topo := NewTopology(1, ms)
	require.NoError(t, p.UpdateTopology(topo))
	ids := testIdentities(90, "user")
	for _, id := range ids {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	mine := ledger.Held()
	require.Positive(t, mine)
	p.DrainEvents()
	p.DrainCacheEvents()

	revoked, invalidated := p.BlockMember(ms[2])
	assert.Len(t, revoked, mine)
	assert.Len(t, invalidated, mine)
	assert.Zero(t, ledger.Held())
	assert.Len(t, p.DrainCacheEvents(), mine)
	for _, id := range invalidated {
		pid, err := p.Get(id, t0)
		require.NoError(t, err)
		assert.NotEqual(t, ms[2].Address, pid.Address, "a blocked member owns nothing")
	}
}

// Integration 1 (seed 000): every node resolves the same identities to the
// same PIDs: two members and a client with the same view and seed.
func TestLookupNodesAgree(t *testing.T) {
	ms := testMembers(3, "user")
	topo := NewTopology(1, ms)
	var nodes []*PartitionIdentityLookup
	for i := range 3 {
		var opts []LookupOption
		if i < 2 {
			opts = append(opts, WithSelf(ms[i].ID))
		}
		p, err := NewPartitionIdentityLookup(DefaultLookupConfig(), opts...)
		require.NoError(t, err)
		if i < 2 {
			require.NoError(t, p.SetupMember([]string{"user"}))
		} else {
			require.NoError(t, p.SetupClient([]string{"user"}))
		}
		require.NoError(t, p.UpdateTopology(topo))
		nodes = append(nodes, p)
	}
	for _, id := range testIdentities(100, "user") {
		var keys []string
		for _, n := range nodes {
			pid, err := n.Get(id, t0)
			require.NoError(t, err)
			keys = append(keys, pid.Key())
		}
		assert.Equal(t, keys[0], keys[1])
		assert.Equal(t, keys[0], keys[2])
	}
	local := nodes[0].Ledger().Held() + nodes[1].Ledger().Held()
	assert.Positive(t, local)
	assert.Zero(t, nodes[2].Ledger().Held(), "a client holds no leases")
}

// Integration 2 (seed 000): topology flow over time: join, leave, TTL,
// passivation, with both event streams checked at each step.
func TestLookupTopologyFlow(t *testing.T) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	require.NoError(t, p.SetupClient([]string{"user"}))
	ms := testMembers(2, "user")
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms[:1])))
	id := NewIdentity("user", "z")
	pid, err := p.Get(id, t0)
	require.NoError(t, err)
	assert.Equal(t, ms[0].Address, pid.Address)
	assert.Equal(t, []VirtualActorEventKind{VirtualActorActivated}, eventKinds(p.DrainEvents()))

	// Only member 1 joins; if z moves, it moves to member 1.
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms)))
	ring := NewRendezvous(DefaultHashConfig()).Build(NewTopology(2, ms))
	owner, err := ring.Owner(id)
	require.NoError(t, err)
	ev := p.DrainEvents()
	if owner.ID == ms[1].ID {
		assert.Equal(t, []VirtualActorEventKind{VirtualActorMoved}, eventKinds(ev))
	} else {
		assert.Empty(t, ev)
	}
	pid, err = p.Get(id, t0.Add(time.Minute))
	require.NoError(t, err)
	assert.Equal(t, owner.Address, pid.Address)
	p.DrainEvents()

	// The owner leaves: z is invalidated and comes back on the survivor.
	survivor := ms[0]
	if owner.ID == ms[0].ID {
		survivor = ms[1]
	}
	require.NoError(t, p.UpdateTopology(NewTopology(3, []Member{survivor})))
	assert.Equal(t, []VirtualActorEventKind{VirtualActorInvalidated}, eventKinds(p.DrainEvents()))
	pid, err = p.Get(id, t0.Add(2*time.Minute))
	require.NoError(t, err)
	assert.Equal(t, survivor.Address, pid.Address)
	assert.Equal(t, []VirtualActorEventKind{VirtualActorActivated}, eventKinds(p.DrainEvents()))

	p.PassivateIdle(t0.Add(2*time.Minute+time.Hour), time.Hour)
	assert.Equal(t, []VirtualActorEventKind{VirtualActorPassivated}, eventKinds(p.DrainEvents()))
	assert.Zero(t, p.Len())
	assert.Zero(t, p.Cache().Len())
}

// Integration 3 (seed 000): event collection: drain returns each event once,
// in order.
func TestLookupEventDrain(t *testing.T) {
	f := newLookup(t, 2)
	a, b := NewIdentity("user", "a"), NewIdentity("user", "b")
	_, _ = f.Get(a, t0)
	_, _ = f.Get(b, t0)
	_, _ = f.Get(a, t0.Add(400*time.Second)) // PID TTL passed: registry hit
	f.RemovePID(b)
	ev := f.DrainEvents()
	assert.Equal(t, []VirtualActorEventKind{VirtualActorActivated, VirtualActorActivated, VirtualActorHit}, eventKinds(ev))
	assert.Equal(t, []Identity{a, b, a}, []Identity{ev[0].Identity, ev[1].Identity, ev[2].Identity})
	assert.Empty(t, f.DrainEvents())
	cev := f.DrainCacheEvents()
	require.Len(t, cev, 1)
	assert.Equal(t, b, cev[0].Identity)
	assert.Empty(t, f.DrainCacheEvents())
}
