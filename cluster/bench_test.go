package cluster

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Owner lookup at 10, 128 and 1,000 members (targets: <= 100 ns at 10,
// <= 5 µs at 1,000, 0 allocs).
func BenchmarkOwner(b *testing.B) {
	for _, weighted := range []bool{false, true} {
		for _, n := range []int{10, 128, 1000} {
			name := fmt.Sprintf("plain/members=%d", n)
			if weighted {
				name = fmt.Sprintf("weighted/members=%d", n)
			}
			b.Run(name, func(b *testing.B) {
				ms := testMembers(n, "k")
				for i := range ms {
					ms[i].Weight = uint32(i%4 + 1)
				}
				ring := NewRendezvous(HashConfig{Seed: DefaultHashSeed, Weighted: weighted}).Build(NewTopology(1, ms))
				ids := testIdentities(1024, "k")
				b.ReportAllocs()
				b.ResetTimer()
				for i := 0; b.Loop(); i++ {
					if _, err := ring.Owner(ids[i&1023]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// Ring rebuild for 10k identities x 128 nodes (seed 002): build the ring of
// a new view and recompute the owner of every tracked identity.
func BenchmarkRingRebuild10kx128(b *testing.B) {
	ms := testMembers(129, "k")
	views := []Topology{NewTopology(1, ms[:128]), NewTopology(2, ms[1:])}
	ids := testIdentities(10000, "k")
	strategy := NewRendezvous(DefaultHashConfig())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ring := strategy.Build(views[i&1])
		for _, id := range ids {
			if _, err := ring.Owner(id); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rebuilds/s")
}

// The same through the lookup: 10k activation records, alternating views
// (one member leaves, another joins: rebuild, the joiner's score against
// every record's cached owner score, moved/invalidated bookkeeping for the
// records the change affects, PidCache drops of the absent owner's
// entries). updates/s is the seed 002 figure (target 10k/s).
func BenchmarkLookupUpdateTopology10kx128(b *testing.B) {
	ms := testMembers(129, "k")
	views := []Topology{NewTopology(1, ms[:128]), NewTopology(2, ms[1:])}
	cfg := DefaultLookupConfig()
	cfg.CacheCapacity = 16384
	p, err := NewPartitionIdentityLookup(cfg)
	if err != nil {
		b.Fatal(err)
	}
	if err := p.UpdateTopology(views[0]); err != nil {
		b.Fatal(err)
	}
	ids := testIdentities(10000, "k")
	b.ReportAllocs()
	epoch := uint64(2)
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		for _, id := range ids { // re-resolve so that every record is live
			if _, err := p.Get(id, t0); err != nil {
				b.Fatal(err)
			}
		}
		p.ReuseEventBuffers(p.DrainEvents(), p.DrainCacheEvents()) // as the runtime does
		v := views[(i+1)&1]
		v.Epoch = epoch
		epoch++
		b.StartTimer()
		if err := p.UpdateTopology(v); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "updates/s")
}

// Lease acquire + release (seed target 50k/s; aim >= 1M/s).
func BenchmarkLedgerAcquireRelease(b *testing.B) {
	l := NewActivationLedger()
	if err := l.SetView(1, 1); err != nil {
		b.Fatal(err)
	}
	ids := testIdentities(4096, "k")
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			id := ids[i&4095]
			lease, err := l.Acquire(id, "self", 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := l.Release(id, lease.LeaseID); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		var next sync.Mutex
		worker := 0
		b.RunParallel(func(pb *testing.PB) {
			next.Lock()
			w := worker
			worker++
			next.Unlock()
			mine := testIdentities(1024, fmt.Sprintf("k%d", w))
			for i := 0; pb.Next(); i++ {
				id := mine[i&1023]
				lease, err := l.Acquire(id, "self", 1)
				if err != nil {
					b.Error(err)
					return
				}
				if _, err := l.Release(id, lease.LeaseID); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "leases/s")
	})
}

var (
	millionOnce  sync.Once
	millionCache *PidCache
	millionIDs   []Identity
)

func filledMillionCache(b *testing.B) (*PidCache, []Identity) {
	millionOnce.Do(func() {
		const n = 1 << 20
		c, err := NewPidCache(PidCacheConfig{Capacity: n, TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ids := testIdentities(n, "k")
		pids := make([]*actor.PID, 128)
		for i := range pids {
			pids[i] = actor.NewPID(fmt.Sprintf("10.0.0.%d:4000", i), "p")
		}
		for i, id := range ids {
			c.Put(id, pids[i&127], "m#1", t0)
		}
		millionCache, millionIDs = c, ids
	})
	return millionCache, millionIDs
}

// PidCache get at 1M entries under parallel readers (seed 002).
func BenchmarkPidCacheGet1M(b *testing.B) {
	c, ids := filledMillionCache(b)
	if c.Len() != len(ids) {
		b.Fatalf("cache holds %d of %d", c.Len(), len(ids))
	}
	b.ReportAllocs()
	b.ResetTimer()
	var seq sync.Mutex
	start := 0
	b.RunParallel(func(pb *testing.PB) {
		seq.Lock()
		i := start * 7919
		start++
		seq.Unlock()
		for pb.Next() {
			if _, ok := c.Get(ids[i&(len(ids)-1)], t0); !ok {
				b.Error("miss")
				return
			}
			i += 104729
		}
	})
}

// Lookup Get served from the cache (the cluster context's hot path).
func BenchmarkLookupGetHit(b *testing.B) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	if err != nil {
		b.Fatal(err)
	}
	if err := p.UpdateTopology(NewTopology(1, testMembers(10, "k"))); err != nil {
		b.Fatal(err)
	}
	ids := testIdentities(512, "k")
	for _, id := range ids {
		if _, err := p.Get(id, t0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		if _, err := p.Get(ids[i&511], t0); err != nil {
			b.Fatal(err)
		}
	}
}

// PidCache Put: replacing a cached entry (a lookup hit refreshes it) and
// inserting into a full cache (CLOCK eviction), owners spread over 128
// members.
func BenchmarkPidCachePut(b *testing.B) {
	members := make([]string, 128)
	pids := make([]*actor.PID, 128)
	for i := range members {
		members[i] = fmt.Sprintf("m-%03d#1", i)
		pids[i] = actor.NewPID(fmt.Sprintf("10.0.0.%d:4000", i), "p")
	}
	b.Run("replace", func(b *testing.B) {
		c, err := NewPidCache(PidCacheConfig{Capacity: 4096, TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ids := testIdentities(4096, "k")
		for i, id := range ids {
			c.Put(id, pids[i&127], members[i&127], t0)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			c.Put(ids[i&4095], pids[i&127], members[i&127], t0)
		}
	})
	b.Run("insert-evict", func(b *testing.B) {
		c, err := NewPidCache(PidCacheConfig{Capacity: 4096, TTL: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ids := testIdentities(1<<16, "k")
		for i, id := range ids[:4096] {
			c.Put(id, pids[i&127], members[i&127], t0)
		}
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			j := (i + 4096) & (1<<16 - 1)
			c.Put(ids[j], pids[j&127], members[j&127], t0)
		}
	})
}

// BenchmarkPlacementCoreTick: one tick of the placement actor (the core's
// tick and overdue) over 100,000 idle-timed activations, none stopping: the
// work the placement actor does every TickInterval between requests.
func BenchmarkPlacementCoreTick(b *testing.B) {
	c := newTestCore(mA)
	if _, err := c.installView(NewTopology(1, []Member{mA}), nil, coreT0); err != nil {
		b.Fatal(err)
	}
	for i := range 100_000 {
		a, _, refusal := c.activate(NewIdentity("user", strconv.Itoa(i)), 1, c.view.Hash, coreT0)
		if refusal != nil {
			b.Fatal(refusal)
		}
		c.started(a, actor.NewPID(mA.Address, "g"+strconv.Itoa(i)))
	}
	now := coreT0.Add(time.Second)
	b.ReportAllocs()
	for b.Loop() {
		if pass, fence, _ := c.tick(now); len(pass) > 0 || fence {
			b.Fatal("nothing is idle for a minute or fenced")
		}
		c.overdue(now)
	}
}

// BenchmarkPidCacheInvalidateMember: a member with 80 entries leaves a
// cache of 10,240 entries of 128 members (the leaver's part of a view
// change in LookupUpdateTopology10kx128).
func BenchmarkPidCacheInvalidateMember(b *testing.B) {
	const members, per = 128, 80
	cfg := DefaultPidCacheConfig()
	cfg.Capacity, cfg.EventCapacity = 16384, 1<<20
	c, err := NewPidCache(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ms := testMembers(members, "k")
	ids := testIdentities(members*per, "k")
	for i, id := range ids {
		c.Put(id, actor.NewPID(ms[i%members].Address, id.ID), ms[i%members].Key(), t0)
	}
	leaver := ms[0].Key()
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for i := 0; i < len(ids); i += members {
			c.Put(ids[i], actor.NewPID(ms[0].Address, ids[i].ID), leaver, t0)
		}
		c.DrainEvents()
		b.StartTimer()
		if n := c.InvalidateMember(leaver); n != per {
			b.Fatalf("dropped %d, want %d", n, per)
		}
	}
}
