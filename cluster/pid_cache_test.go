package cluster

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var t0 = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func newTestCache(t *testing.T, capacity int, ttl time.Duration) *PidCache {
	t.Helper()
	c, err := NewPidCache(PidCacheConfig{Capacity: capacity, TTL: ttl, EventCapacity: 1024})
	require.NoError(t, err)
	return c
}

func TestPidCacheConfigValidate(t *testing.T) {
	assert.NoError(t, DefaultPidCacheConfig().Validate())
	for name, cfg := range map[string]PidCacheConfig{
		"capacity": {Capacity: 0, TTL: time.Second},
		"ttl":      {Capacity: 1, TTL: 0},
		"events":   {Capacity: 1, TTL: time.Second, EventCapacity: -1},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := NewPidCache(cfg)
			assert.ErrorIs(t, err, ErrInvalidConfig)
			assert.ErrorContains(t, err, "cluster: invalid config")
		})
	}
}

// L2/L4: an entry is served until its TTL passes, with time injected.
func TestPidCacheTTL(t *testing.T) {
	c := newTestCache(t, 8, 10*time.Second)
	id := NewIdentity("k", "1")
	pid := actor.NewPID("n1", "g1")
	c.Put(id, pid, "n1#1", t0)

	got, ok := c.Get(id, t0.Add(9*time.Second))
	require.True(t, ok)
	assert.Same(t, pid, got)
	_, ok = c.Get(id, t0.Add(10*time.Second))
	assert.False(t, ok, "expired exactly at TTL")
	assert.Empty(t, c.DrainEvents(), "a Get never records events")

	assert.Equal(t, 1, c.PurgeExpired(t0.Add(10*time.Second)))
	assert.Equal(t, []PidCacheEvent{{Identity: id, PID: pid, Member: "n1#1", Reason: CacheExpired}}, c.DrainEvents())
	assert.Zero(t, c.Len())

	// A Put refreshes the TTL.
	c.Put(id, pid, "n1#1", t0)
	c.Put(id, pid, "n1#1", t0.Add(8*time.Second))
	_, ok = c.Get(id, t0.Add(15*time.Second))
	assert.True(t, ok)
}

// Capacity: a full cache evicts by CLOCK, sparing recently read entries.
func TestPidCacheCapacityEviction(t *testing.T) {
	c := newTestCache(t, 3, time.Hour)
	ids := testIdentities(4, "k")
	for i, id := range ids[:3] {
		c.Put(id, actor.NewPID("n", fmt.Sprint(i)), "n#1", t0)
	}
	_, ok := c.Get(ids[0], t0)
	require.True(t, ok) // ids[0] gets a second chance
	c.Put(ids[3], actor.NewPID("n", "3"), "n#1", t0)

	assert.Equal(t, 3, c.Len())
	ev := c.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, ids[1], ev[0].Identity)
	assert.Equal(t, CacheEvicted, ev[0].Reason)
	_, ok = c.Get(ids[0], t0)
	assert.True(t, ok, "recently read entry survived")
	_, ok = c.Get(ids[1], t0)
	assert.False(t, ok)

	// Large cache: never more than capacity entries.
	big := newTestCache(t, 1000, time.Hour)
	for i, id := range testIdentities(5000, "k") {
		big.Put(id, actor.NewPID("n", fmt.Sprint(i)), "n#1", t0)
	}
	assert.Equal(t, 1000, big.Len())
	assert.Len(t, big.DrainEvents(), 1024, "events bounded by EventCapacity")
	assert.Equal(t, uint64(4000-1024), big.DroppedEvents())
}

func TestPidCacheEvictionPrefersExpired(t *testing.T) {
	c := newTestCache(t, 2, 10*time.Second)
	a, b, d := NewIdentity("k", "a"), NewIdentity("k", "b"), NewIdentity("k", "d")
	c.Put(a, actor.NewPID("n", "a"), "n#1", t0)
	c.Put(b, actor.NewPID("n", "b"), "n#1", t0.Add(5*time.Second))
	c.Get(a, t0)
	c.Get(b, t0.Add(5*time.Second))
	c.Put(d, actor.NewPID("n", "d"), "n#1", t0.Add(12*time.Second)) // a expired, b still valid
	ev := c.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, PidCacheEvent{Identity: a, PID: ev[0].PID, Member: "n#1", Reason: CacheExpired}, ev[0])
}

// L3, V3.5: invalidation by key, by member and by absent members, with events.
func TestPidCacheInvalidation(t *testing.T) {
	c := newTestCache(t, 100, time.Hour)
	ms := testMembers(3, "k")
	ids := testIdentities(9, "k")
	for i, id := range ids {
		m := ms[i%3]
		c.Put(id, actor.NewPID(m.Address, id.ID), m.Key(), t0)
	}

	assert.True(t, c.Remove(ids[0]))
	assert.False(t, c.Remove(ids[0]))
	ev := c.DrainEvents()
	require.Len(t, ev, 1)
	assert.Equal(t, CacheRemoved, ev[0].Reason)

	assert.Equal(t, 3, c.InvalidateMember(ms[1].Key()))
	ev = c.DrainEvents()
	assert.ElementsMatch(t, []Identity{ids[1], ids[4], ids[7]}, eventIdentities(ev))
	for _, e := range ev {
		assert.Equal(t, CacheMemberLeft, e.Reason)
		assert.Equal(t, ms[1].Key(), e.Member)
	}

	// Member 2 restarted (new incarnation): its old entries are absent.
	restarted := ms[2]
	restarted.Incarnation++
	assert.Equal(t, 3, c.InvalidateAbsent([]Member{ms[0], restarted}))
	ev = c.DrainEvents()
	assert.ElementsMatch(t, []Identity{ids[2], ids[5], ids[8]}, eventIdentities(ev))
	for _, e := range ev {
		assert.Equal(t, CacheMemberAbsent, e.Reason)
	}
	assert.Equal(t, 2, c.Len()) // ids[3], ids[6] on member 0
	for _, id := range []Identity{ids[3], ids[6]} {
		_, ok := c.Get(id, t0)
		assert.True(t, ok)
	}
}

func eventIdentities(ev []PidCacheEvent) []Identity {
	out := make([]Identity, len(ev))
	for i, e := range ev {
		out[i] = e.Identity
	}
	return out
}

// fillCache puts a PID for each of ids, owned by member, and returns the
// PIDs and where they were put.
func fillCache(c *PidCache, ids []Identity, member string) ([]*actor.PID, []cacheHint) {
	pids := make([]*actor.PID, len(ids))
	hints := make([]cacheHint, len(ids))
	for i, id := range ids {
		pids[i] = actor.NewPID("n", id.ID)
		hints[i] = c.put(id, pids[i], member, t0)
	}
	return pids, hints
}

// Concurrent readers and a writer (run with -race).
func TestPidCacheConcurrent(t *testing.T) {
	c := newTestCache(t, 4096, time.Hour)
	ids := testIdentities(2000, "k")
	pids, _ := fillCache(c, ids, "n#1")
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for i := r; i < len(ids)*5; i += 4 {
				j := i % len(ids)
				if pid, ok := c.Get(ids[j], t0); ok && !pid.Equal(pids[j]) {
					t.Errorf("wrong PID for %s", ids[j])
				}
			}
		})
	}
	wg.Go(func() {
		for i, id := range ids {
			if i%3 == 0 {
				c.Remove(id)
			} else {
				c.Put(id, pids[i], "n#1", t0)
			}
		}
	})
	wg.Wait()
	assert.Equal(t, len(ids)-(len(ids)+2)/3, c.Len())
}

func TestPidCacheGetDoesNotAllocate(t *testing.T) {
	c := newTestCache(t, 1024, time.Hour)
	id := NewIdentity("k", "x")
	c.Put(id, actor.NewPID("n", "x"), "n#1", t0)
	assert.Zero(t, testing.AllocsPerRun(1000, func() { c.Get(id, t0) }))
}

// InvalidateMember and InvalidateAbsent examine only the entries of the
// members they drop, not the whole cache: with 4,096 entries over 64
// members, dropping one member touches its 64 entries.
func TestPidCacheInvalidationTouchesOnlyDroppedMembers(t *testing.T) {
	c := newTestCache(t, 8192, time.Hour)
	ms := testMembers(64, "k")
	ids := testIdentities(4096, "k")
	for i, id := range ids {
		m := ms[i%64]
		c.Put(id, actor.NewPID(m.Address, id.ID), m.Key(), t0)
	}

	c.invalVisits.Store(0)
	require.Equal(t, 64, c.InvalidateMember(ms[5].Key()))
	assert.Equal(t, uint64(64), c.invalVisits.Load())
	require.Zero(t, c.InvalidateMember(ms[5].Key()))
	assert.Equal(t, uint64(64), c.invalVisits.Load(), "a member with no entries costs no scan")

	c.invalVisits.Store(0)
	restarted := ms[7]
	restarted.Incarnation++
	present := append(slices.Clone(ms[:7]), restarted)
	present = append(present, ms[9:]...) // ms[8] left, ms[7] restarted
	require.Equal(t, 128, c.InvalidateAbsent(present))
	assert.Equal(t, uint64(128), c.invalVisits.Load())
	for _, e := range c.DrainEvents() {
		if e.Reason == CacheMemberAbsent {
			assert.Contains(t, []string{ms[7].Key(), ms[8].Key()}, e.Member)
		}
	}
	assert.Equal(t, 4096-3*64, c.Len())

	// A slot reused by eviction or replaced for another owner moves to that
	// owner's entries.
	c.Put(ids[0], actor.NewPID("x", "0"), ms[8].Key(), t0)
	require.Equal(t, 1, c.InvalidateAbsent(present))
	_, ok := c.Get(ids[0], t0)
	assert.False(t, ok)
	require.Equal(t, 63, c.InvalidateMember(ms[0].Key()))
}

// Owner members whose entries all left are forgotten: the per-member index
// does not grow with the number of distinct owners seen.
func TestPidCacheForgetsEmptyOwners(t *testing.T) {
	c := newTestCache(t, 64, time.Hour)
	id := NewIdentity("k", "x")
	for i := range 10000 {
		c.Put(id, actor.NewPID("n", "x"), fmt.Sprintf("m-%d#1", i), t0)
		if i%2 == 0 {
			c.Remove(id)
		}
	}
	c.memMu.Lock()
	owners := len(c.members)
	c.memMu.Unlock()
	assert.LessOrEqual(t, owners, 2*sweepEmpty+2)
	c.InvalidateAbsent(nil)
	assert.Zero(t, c.Len())
	c.memMu.Lock()
	assert.Empty(t, c.members)
	c.memMu.Unlock()
	for i := range c.shards {
		assert.Empty(t, c.shards[i].members)
	}
}

// A member's entries leave in one batch per shard: every entry is gone
// (L3, V3.5), its slots are reused, the other member's entries stay, and
// the events stay bounded by EventCapacity with the rest counted.
func TestPidCacheInvalidateMemberBatchBoundsEvents(t *testing.T) {
	c, err := NewPidCache(PidCacheConfig{Capacity: 4096, TTL: time.Hour, EventCapacity: 5})
	require.NoError(t, err)
	require.Greater(t, len(c.shards), 1, "entries must spread over shards")
	ids := testIdentities(300, "k")
	for i, id := range ids {
		member := "a#1"
		if i%3 == 0 {
			member = "b#1"
		}
		c.Put(id, actor.NewPID("n", id.ID), member, t0)
	}
	assert.Equal(t, 200, c.InvalidateMember("a#1"))
	assert.Equal(t, 100, c.Len())
	ev := c.DrainEvents()
	require.Len(t, ev, 5)
	for _, e := range ev {
		assert.Equal(t, "a#1", e.Member)
		assert.Equal(t, CacheMemberLeft, e.Reason)
		assert.Equal(t, e.Identity.ID, e.PID.ID)
	}
	assert.Equal(t, uint64(195), c.DroppedEvents())
	for i, id := range ids {
		_, ok := c.Get(id, t0)
		assert.Equal(t, i%3 == 0, ok, "entry %d", i)
	}
	assert.Zero(t, c.InvalidateMember("a#1"), "nothing left to drop")
	for _, id := range ids[:30] {
		c.Put(id, actor.NewPID("n", id.ID), "a#2", t0)
	}
	assert.Equal(t, 120, c.Len())
	assert.Equal(t, 30, c.InvalidateMember("a#2"), "20 new entries and 10 taken over from b#1")
	assert.Equal(t, 90, c.Len())
}

// Invalidation clears a member's shard marks in one round after dropping
// its lists; a Put for the member into a shard already dropped, between the
// two, keeps that shard's mark (the generation check), so the entry is
// found by the next invalidation. The marks of the shards not refilled are
// cleared.
func TestPidCacheShardRefilledMeanwhileKeepsItsMark(t *testing.T) {
	c := newTestCache(t, 8192, time.Hour)
	require.Greater(t, len(c.shards), 8)
	ids := testIdentities(256, "k")
	for _, id := range ids {
		c.Put(id, actor.NewPID("a", id.ID), "a#1", t0)
	}
	shards, gen := c.memberShards("a#1")
	n, emptied := c.dropMemberLists("a#1", shards, CacheMemberLeft, nil)
	require.Equal(t, len(ids), n)
	refill := ids[0]
	c.Put(refill, actor.NewPID("a", refill.ID), "a#1", t0) // a Put racing with the invalidation
	c.unmarkShards("a#1", emptied, gen)

	home := int(identityHash(0, refill) & c.mask)
	c.memMu.Lock()
	marks := c.members["a#1"].shards
	c.memMu.Unlock()
	want := [4]uint64{}
	want[home/64] = 1 << (home % 64)
	require.Equal(t, want, marks, "only the refilled shard stays marked")
	require.Equal(t, 1, c.InvalidateMember("a#1"))
	_, ok := c.Get(refill, t0)
	require.False(t, ok)

	// Without a racing Put the marks go in the one round: the member is
	// forgotten.
	for _, id := range ids {
		c.Put(id, actor.NewPID("a", id.ID), "a#1", t0)
	}
	require.Equal(t, len(ids), c.InvalidateMember("a#1"))
	c.memMu.Lock()
	_, known := c.members["a#1"]
	c.memMu.Unlock()
	require.False(t, known)
}

// Puts racing with invalidations of their owner never leave an entry in a
// shard that is not marked for its owner: after the race, every member's
// entries are found by InvalidateMember.
func TestPidCacheMarksCoverEntriesUnderConcurrentInvalidation(t *testing.T) {
	c := newTestCache(t, 8192, time.Hour)
	ids := testIdentities(3000, "k")
	members := []string{"a#1", "b#1"}
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			for i := w; i < len(ids); i += 2 {
				c.Put(ids[i], actor.NewPID("n", ids[i].ID), members[i%2], t0)
			}
		})
	}
	for _, m := range members {
		wg.Go(func() {
			for range 200 {
				c.InvalidateMember(m)
			}
		})
	}
	wg.Wait()
	c.memMu.Lock()
	for si := range c.shards {
		s := &c.shards[si]
		for member, l := range s.members {
			if l.n == 0 {
				continue
			}
			m := c.members[member]
			if m == nil || m.shards[si/64]&(1<<(si%64)) == 0 {
				t.Errorf("shard %d holds %d entries of %s but is not marked", si, l.n, member)
			}
		}
	}
	c.memMu.Unlock()
	n := c.Len()
	for _, m := range members {
		n -= c.InvalidateMember(m)
	}
	require.Zero(t, n)
	require.Zero(t, c.Len())
}

// removeBatch drops every entry it names (and no other), records one
// event per dropped entry, and locks each shard it touches once, not once
// per entry.
func TestPidCacheRemoveBatchLocksEachShardOnce(t *testing.T) {
	c := newTestCache(t, 16384, time.Hour)
	ids := testIdentities(2000, "k")
	for _, id := range ids {
		c.Put(id, actor.NewPID("n", id.ID), "n#1", t0)
	}
	c.DrainEvents()
	var b removeBatch
	shards := map[uint64]bool{}
	for i := 0; i < len(ids); i += 5 {
		b.ids = append(b.ids, ids[i])
		shards[identityHash(0, ids[i])&c.mask] = true
	}
	b.ids = append(b.ids, NewIdentity("k", "not-cached"), ids[0]) // a miss and a repeat
	want := len(b.ids) - 2
	require.Less(t, len(shards), want, "the batch must share shards for the test to mean anything")
	before := c.writeRounds.Load()
	c.removeBatch(&b, CacheOwnerMoved)
	require.Equal(t, uint64(len(shards)), c.writeRounds.Load()-before)
	require.Empty(t, b.ids)
	ev := c.DrainEvents()
	require.Len(t, ev, want)
	for _, e := range ev {
		require.Equal(t, CacheOwnerMoved, e.Reason)
		require.Equal(t, "n#1", e.Member)
	}
	require.Equal(t, len(ids)-want, c.Len())
	require.Equal(t, int64(len(ids)-want), c.count.Load())
	for i, id := range ids {
		_, ok := c.Get(id, t0)
		require.Equal(t, i%5 != 0, ok, "%s", id)
	}
}

// removeBatch finds an entry through the slot its hint names, without the
// index, as long as the slot still holds the identity; a hint whose slot
// now holds another identity drops neither that identity nor, wrongly, an
// entry the index does not have, and an entry put again elsewhere is found
// through the index.
func TestPidCacheRemoveBatchUsesHints(t *testing.T) {
	c := newTestCache(t, 4096, time.Hour)
	ids := testIdentities(200, "k")
	_, hints := fillCache(c, ids, "n#1")
	var b removeBatch
	for i := 0; i < 100; i++ {
		b.add(ids[i], hints[i])
	}
	finds := c.indexFinds.Load()
	c.removeBatch(&b, CacheOwnerMoved)
	require.Equal(t, finds, c.indexFinds.Load(), "every entry found through its hint")
	require.Len(t, c.DrainEvents(), 100)
	require.Equal(t, 100, c.Len())

	// a, then b in a's freed slot (same shard: the free list is LIFO).
	a := ids[100]
	var other Identity
	for i := 0; other.ID == ""; i++ {
		if id := NewIdentity("k", fmt.Sprintf("other-%d", i)); c.shard(id) == c.shard(a) {
			other = id
		}
	}
	require.True(t, c.Remove(a))
	hb := c.put(other, actor.NewPID("n", "other"), "n#1", t0)
	require.Equal(t, hints[100], hb, "the freed slot is reused")
	b.add(a, hints[100]) // stale: the slot holds other, a is not cached
	c.removeBatch(&b, CacheOwnerMoved)
	_, ok := c.Get(other, t0)
	require.True(t, ok, "a stale hint must not drop the identity now in its slot")

	// a put again elsewhere: found through the index.
	c.Put(a, actor.NewPID("n", a.ID), "n#1", t0)
	c.DrainEvents()
	finds = c.indexFinds.Load()
	b.add(a, hints[100])
	c.removeBatch(&b, CacheOwnerMoved)
	require.Equal(t, finds+1, c.indexFinds.Load())
	_, ok = c.Get(a, t0)
	require.False(t, ok)
	_, ok = c.Get(other, t0)
	require.True(t, ok)
	ev := c.DrainEvents()
	require.Len(t, ev, 1)
	require.Equal(t, a, ev[0].Identity)
}

// removeBatch racing with Gets and Puts of the same identities (run with
// -race) leaves a consistent cache: each identity is cached with its PID or
// absent, the entry count matches the index, and every member list holds
// exactly its shard's entries of that member.
func TestPidCacheRemoveBatchConcurrent(t *testing.T) {
	c := newTestCache(t, 8192, time.Hour)
	ids := testIdentities(3000, "k")
	pids, hints := fillCache(c, ids, "n#1")
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := range len(ids) * 3 {
			j := i % len(ids)
			if pid, ok := c.Get(ids[j], t0); ok && !pid.Equal(pids[j]) {
				t.Errorf("wrong PID for %s", ids[j])
			}
		}
	})
	wg.Go(func() {
		for i := range len(ids) * 2 {
			j := (i * 7) % len(ids)
			c.Put(ids[j], pids[j], []string{"n#1", "m#2"}[i%2], t0)
		}
	})
	wg.Go(func() {
		var b removeBatch
		for round := range 30 {
			for i := round % 3; i < len(ids); i += 3 {
				b.add(ids[i], hints[i]) // stale once the entry moves
			}
			c.removeBatch(&b, CacheOwnerMoved)
		}
	})
	wg.Wait()
	n := 0
	for si := range c.shards {
		s := &c.shards[si]
		listed := 0
		for member, l := range s.members {
			for i := l.head; i >= 0; i = s.slots[i].next {
				require.Equal(t, member, s.slots[i].member)
				listed++
			}
			require.Equal(t, int(l.n), func() int {
				k := 0
				for i := l.head; i >= 0; i = s.slots[i].next {
					k++
				}
				return k
			}())
		}
		require.Equal(t, len(s.index), listed, "shard %d", si)
		n += len(s.index)
	}
	require.Equal(t, int64(n), c.count.Load())
	for i, id := range ids {
		if pid, ok := c.Get(id, t0); ok {
			require.True(t, pid.Equal(pids[i]))
		}
	}
}
