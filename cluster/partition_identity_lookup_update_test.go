package cluster

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// UpdateTopology examines only the records that a joining member may
// take: one join into 16 members with 4,000 records examines about 4000/17
// of them, not all 4,000, and computes no owner in full (the joiner's higher
// score settles each move; only an exact tie would need the ring).
func TestLookupUpdateTopologyChecksOnlyCandidates(t *testing.T) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	ms := testMembers(17, "k")
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms[:16])))
	for _, id := range testIdentities(4000, "k") {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	p.DrainEvents()
	p.ownerChecks, p.recordVisits = 0, 0
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms)))
	moved := 0
	for _, e := range p.DrainEvents() {
		require.Equal(t, VirtualActorMoved, e.Kind)
		moved++
	}
	require.Positive(t, moved)
	require.Equal(t, moved, p.recordVisits, "records examined for one join (moved %d of 4000)", moved)
	require.Zero(t, p.ownerChecks)

	// Once the moved records are resolved again, a leave moves nothing that
	// the leaver did not own: no owner is computed.
	for _, id := range testIdentities(4000, "k") {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	p.DrainEvents()
	p.ownerChecks = 0
	require.NoError(t, p.UpdateTopology(NewTopology(3, ms[1:])))
	for _, e := range p.DrainEvents() {
		require.NotEqual(t, VirtualActorMoved, e.Kind, "%v", e)
	}
	require.Zero(t, p.ownerChecks)
}

// Random view sequences (joins, leaves, restarts, kind and weight changes,
// blocks, re-resolutions): after every UpdateTopology the VirtualActorMoved
// events name exactly the records whose owner the new ring does not pick,
// as a full recomputation finds them.
func TestLookupUpdateTopologyMatchesFullRecompute(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		for seed := range uint64(12) {
			t.Run(fmt.Sprintf("weighted=%v/seed=%d", weighted, seed), func(t *testing.T) {
				checkUpdateSequence(t, weighted, seed)
			})
		}
	}
}

func checkUpdateSequence(t *testing.T, weighted bool, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	cfg := DefaultLookupConfig()
	cfg.Hash.Weighted = weighted
	cfg.CacheCapacity = 4096
	p, err := NewPartitionIdentityLookup(cfg)
	require.NoError(t, err)
	kinds := []string{"a", "b"}
	pool := make([]Member, 24)
	for i := range pool {
		pool[i] = Member{ID: fmt.Sprintf("m-%02d", i), Incarnation: 1, Address: fmt.Sprintf("10.0.0.%d:1", i), Kinds: kinds, Weight: 1}
	}
	in := make([]bool, len(pool))
	for i := range 8 {
		in[i] = true
	}
	ids := append(testIdentities(300, "a"), testIdentities(300, "b")...)
	view := func() []Member {
		var out []Member
		for i, m := range pool {
			if in[i] {
				out = append(out, m)
			}
		}
		return out
	}
	for epoch := uint64(1); epoch <= 60; epoch++ {
		switch op := rng.IntN(10); {
		case op < 3: // join
			in[rng.IntN(len(pool))] = true
		case op < 5: // leave
			in[rng.IntN(len(pool))] = false
		case op < 6: // restart under the same ID
			pool[rng.IntN(len(pool))].Incarnation++
		case op < 7: // kinds change
			pool[rng.IntN(len(pool))].Kinds = [][]string{{"a"}, {"b"}, kinds}[rng.IntN(3)]
		case op < 8: // weight change
			pool[rng.IntN(len(pool))].Weight = uint32(rng.IntN(3) + 1)
		case op < 9: // block a member of the current view
			if ms := p.Topology().Members; len(ms) > 0 {
				p.BlockMember(ms[rng.IntN(len(ms))])
			}
		}
		next := NewTopology(epoch, view())
		if rng.IntN(4) == 0 { // a view given out of order pairs candidates by map
			rng.Shuffle(len(next.Members), func(i, j int) { next.Members[i], next.Members[j] = next.Members[j], next.Members[i] })
		}
		if next.Hash == p.Topology().Hash && sameMembers(next.Members, p.Topology().Members) {
			continue // the same view changes nothing (B2.2)
		}
		require.NoError(t, p.UpdateTopology(next))
		var moved []Identity
		for _, e := range p.DrainEvents() {
			if e.Kind == VirtualActorMoved {
				moved = append(moved, e.Identity)
			}
		}
		var want []Identity
		for id, rec := range p.records {
			owner, err := p.ring.Owner(id)
			if err != nil || !sameMember(owner, rec.slot.member) {
				want = append(want, id)
			}
		}
		slices.SortFunc(want, compareIdentities)
		require.Equal(t, want, moved, "epoch %d", epoch)
		checkRecordIndex(t, p)
		for _, id := range ids[:rng.IntN(len(ids))] { // resolve again: new and reactivated records
			_, _ = p.Get(id, t0)
		}
		p.DrainEvents()
		p.DrainCacheEvents()
		checkRecordIndex(t, p)
	}
}

// checkRecordIndex checks that the owner and kind indexes hold exactly the
// records, with the lanes and owner scores of the current ring for those
// that are not stale.
func checkRecordIndex(t *testing.T, p *PartitionIdentityLookup) {
	t.Helper()
	bySlot, byKind, stale := 0, 0, 0
	for _, s := range p.owners {
		for i, rec := range s.recs {
			if rec.slot != s || rec.slotPos != i || p.records[rec.id] != rec {
				t.Fatalf("owner index of %s: slot %s pos %d/%d", rec.id, rec.slot.key, rec.slotPos, i)
			}
		}
		bySlot += len(s.recs)
	}
	rr := p.ring.(*rendezvousRing)
	memberLanes := map[string]uint64{}
	for kind, kr := range p.byKind {
		if len(kr.recs) == 0 || len(kr.lanes) != len(kr.recs) || len(kr.best) != len(kr.recs) || len(kr.bestW) != len(kr.recs) {
			t.Fatalf("kind %s: columns of %d/%d/%d/%d", kind, len(kr.recs), len(kr.lanes), len(kr.best), len(kr.bestW))
		}
		for i, rec := range kr.recs {
			if rec.id.Kind != kind || rec.kindPos != i || p.records[rec.id] != rec {
				t.Fatalf("kind index of %s: kind %s pos %d/%d", rec.id, kind, rec.kindPos, i)
			}
			if rec.stale {
				continue
			}
			lane, ok := memberLanes[rec.slot.member.ID]
			if !ok {
				lane = memberLane(rr.seed, memberHash(rr.seed, rec.slot.member.ID))
				memberLanes[rec.slot.member.ID] = lane
			}
			idLane := xxRound(identityHash(rr.seed, rec.id))
			best := scoreFinish(lane ^ idLane)
			if !rec.hasLane || kr.lanes[i] != idLane || kr.best[i] != best {
				t.Fatalf("lane or owner score of %s out of date", rec.id)
			}
			if rr.weighted {
				m, _ := p.topo.Member(rec.slot.member.ID)
				if kr.bestW[i] != weightedScore(best, m.Weight) {
					t.Fatalf("weighted owner score of %s out of date", rec.id)
				}
			}
		}
		byKind += len(kr.recs)
	}
	for _, rec := range p.records {
		if rec.stale {
			stale++
			if rec.stalePos >= len(p.stale) || p.stale[rec.stalePos] != rec {
				t.Fatalf("stale %s not in the stale set", rec.id)
			}
		}
	}
	require.Equal(t, len(p.records), bySlot)
	require.Equal(t, len(p.records), byKind)
	require.Equal(t, stale, len(p.stale))
	require.Zero(t, p.laneless)
}

// A view change examines only the records it may affect: a leave the
// leaver's records, a join the records whose cached owner score the joiner
// reaches (the others are passed over by comparing two scores, without
// touching the record).
func TestLookupUpdateTopologyVisitsOnlyAffectedRecords(t *testing.T) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	ms := testMembers(17, "k")
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms[:16])))
	ids := testIdentities(4000, "k")
	owned := map[string]int{}
	for _, id := range ids {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	for _, e := range p.DrainEvents() {
		owned[e.Owner]++
	}

	p.recordVisits = 0
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms[1:16]))) // ms[0] leaves
	invalidated := 0
	for _, e := range p.DrainEvents() {
		require.Equal(t, VirtualActorInvalidated, e.Kind)
		invalidated++
	}
	require.Equal(t, owned[ms[0].Key()], invalidated)
	require.Equal(t, invalidated, p.recordVisits, "a leave visits the leaver's records only")
	require.Equal(t, len(ids)-invalidated, p.Len())

	p.recordVisits, p.ownerChecks = 0, 0
	require.NoError(t, p.UpdateTopology(NewTopology(3, ms[1:]))) // ms[16] joins
	moved := len(p.DrainEvents())
	require.Positive(t, moved)
	require.Equal(t, moved, p.recordVisits, "a join visits only the records it takes")
	require.Zero(t, p.ownerChecks)

	// A leave and a join in one view (the benchmark's update).
	for _, id := range ids {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	p.DrainEvents()
	p.recordVisits, p.ownerChecks = 0, 0
	require.NoError(t, p.UpdateTopology(NewTopology(4, ms[:16]))) // ms[16] leaves, ms[0] joins
	invalidated, moved = 0, 0
	for _, e := range p.DrainEvents() {
		switch e.Kind {
		case VirtualActorInvalidated:
			invalidated++
		case VirtualActorMoved:
			moved++
		}
	}
	require.Positive(t, invalidated)
	require.Positive(t, moved)
	require.Equal(t, invalidated+moved, p.recordVisits)
	require.Zero(t, p.ownerChecks)
}

// sortEvents orders events by identity like compareIdentities, whatever
// the kinds and however long the IDs (shared eight-byte prefixes, IDs that
// are prefixes of others, bytes above 0x7f), and keeps each event whole.
func TestLookupSortEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := []string{"a", "b", "ab", "\x00", "\xff", "id-0000", "id-00001", "x"}
	p := &PartitionIdentityLookup{}
	kinds := []string{"k", "kk", "a"}
	for i := range maxSortKinds + 2 {
		kinds = append(kinds, fmt.Sprintf("kind-%c", 'z'-i))
	}
	for round := range 300 {
		seen := map[Identity]bool{}
		var es []VirtualActorEvent
		nk := []int{1, 3, maxSortKinds, len(kinds)}[round%4] // the last one more kinds than ranked
		for len(es) < 1+rng.IntN(300) {
			id := Identity{Kind: kinds[rng.IntN(nk)]}
			for range rng.IntN(4) {
				id.ID += alphabet[rng.IntN(len(alphabet))]
			}
			if seen[id] {
				continue
			}
			seen[id] = true
			es = append(es, VirtualActorEvent{Kind: VirtualActorMoved, Identity: id, Owner: fmt.Sprint(len(es)), LeaseID: uint64(len(es))})
		}
		want := slices.Clone(es)
		slices.SortFunc(want, func(a, b VirtualActorEvent) int { return compareIdentities(a.Identity, b.Identity) })
		p.sortEvents(es)
		require.Equal(t, want, es, "round %d", round)
	}
}

// sortEventKeys orders keys by kind rank, then ID prefix, for any input:
// random keys with many repeats, sorted and reversed runs, and with every
// depth limit, down to 0, where heapsort sorts the whole range.
func TestSortEventKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 11))
	byKey := func(a, b eventKey) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		return cmp.Compare(a.prefix, b.prefix)
	}
	for round := range 400 {
		n := rng.IntN(600)
		keys := make([]eventKey, n)
		spread := uint64(1 + rng.IntN(4)*rng.IntN(1000)) // 1: all prefixes equal
		for i := range keys {
			keys[i] = eventKey{rank: uint32(rng.IntN(3)), at: int32(i), prefix: rng.Uint64N(spread)}
		}
		switch round % 4 {
		case 1:
			slices.SortFunc(keys, byKey)
		case 2:
			slices.SortFunc(keys, func(a, b eventKey) int { return byKey(b, a) })
		}
		want := slices.Clone(keys)
		slices.SortFunc(want, byKey)
		depth := []int{0, 1, 3, 2 * bits.Len(uint(n))}[rng.IntN(4)]
		heapsorted := sortEventKeys(keys, depth)
		require.Zero(t, slices.CompareFunc(want, keys, byKey), "round %d: %d keys, depth %d", round, n, depth)
		if depth == 0 && n > 12 {
			require.Equal(t, 1, heapsorted)
		}
		seen := make([]bool, n)
		for _, k := range keys {
			require.False(t, seen[k.at], "key %d twice", k.at)
			seen[k.at] = true
		}
	}
}

// The depth limit bounds the quicksort on inputs that defeat its pivot:
// with the median of three at the ends and the middle, this input puts the
// second-smallest key in the middle at every level, so each partition
// splits off about two keys. The sort still finishes in n log n steps
// (heapsort takes over) and sorts.
func TestSortEventKeysDepthLimit(t *testing.T) {
	const n = 1 << 14
	keys := medianOfThreeKiller(n)
	heapsorted := sortEventKeys(keys, 2*bits.Len(uint(n)))
	require.Positive(t, heapsorted, "the quicksort went %d levels deep without a fallback", 2*bits.Len(uint(n)))
	require.True(t, slices.IsSortedFunc(keys, func(a, b eventKey) int { return cmp.Compare(a.prefix, b.prefix) }))
}

// medianOfThreeKiller returns n keys on which every partition of
// sortEventKeys takes the second-smallest key of its range as the pivot.
// It replays the sort's moves on positions and gives a position its value
// when the sort first reads it as a pivot candidate: the two smallest
// values left go to the range's first and middle places; every place not
// yet given a value is larger than all that are.
func medianOfThreeKiller(n int) []eventKey {
	const unset = math.MaxUint64
	at := make([]int, n)     // at[i]: the key (by first place) now at place i
	val := make([]uint64, n) // by first place
	for i := range at {
		at[i], val[i] = i, unset
	}
	next := uint64(0)
	for r := at; len(r) > 12; {
		last, m := len(r)-1, len(r)/2
		val[r[0]], val[r[m]] = next, next+1 // r[last] is unset: no swap in the median of three
		next += 2
		r[0], r[m] = r[m], r[0]
		pivot := val[r[0]]
		i, j := 1, last
		for {
			for val[r[i]] < pivot {
				i++
			}
			for pivot < val[r[j]] {
				j--
			}
			if i >= j {
				break
			}
			r[i], r[j] = r[j], r[i]
			i, j = i+1, j-1
		}
		r[0], r[j] = r[j], r[0]
		r = r[j+1:] // the larger side, which the sort keeps partitioning
	}
	keys := make([]eventKey, n)
	for i := range keys {
		if val[i] == unset {
			val[i] = next
			next++
		}
		keys[i] = eventKey{at: int32(i), prefix: val[i]}
	}
	return keys
}

// The join scan finds the same records eight at a time (AVX-512, where the
// CPU has it) as one at a time: random scores, exact ties (a tie is a hit)
// and scores one above or below, at every length around the vector width
// and at 10k records.
func TestJoinScanWideMatchesScalar(t *testing.T) {
	if !hasJoinScanWide {
		t.Skip("no wide join scan on this CPU")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	lengths := []int{10007}
	for n := range 70 {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for round := range 20 {
			c := rng.Uint64()
			lanes, best := make([]uint64, n), make([]uint64, n)
			for i := range lanes {
				lanes[i] = rng.Uint64()
				s := scoreFinish(c ^ lanes[i])
				switch rng.IntN(5) {
				case 0:
					best[i] = s // tie
				case 1:
					best[i] = s + 1
				case 2:
					best[i] = s - 1
				default:
					best[i] = rng.Uint64()
				}
			}
			want := joinScanScalar(lanes, best, c, nil, 0)
			got, _ := joinScan(lanes, best, c, nil, nil)
			require.Equal(t, want, got, "%d records, round %d", n, round)
			if n >= 8 {
				mask := make([]byte, n/8)
				joinScanWide(lanes[:n&^7], best[:n&^7], c, mask)
				for i := range n &^ 7 {
					require.Equal(t, scoreFinish(c^lanes[i]) >= best[i], mask[i/8]&(1<<(i%8)) != 0, "record %d of %d", i, n)
				}
			}
		}
	}
}

// A join drops the cached PIDs of the records it moves in one batch: one
// shard lock round per shard touched, not one per moved record.
func TestLookupUpdateTopologyDropsMovedPIDsByShard(t *testing.T) {
	cfg := DefaultLookupConfig()
	cfg.CacheCapacity = 4096 // 32 shards for about 4000/17 moved records
	p, err := NewPartitionIdentityLookup(cfg)
	require.NoError(t, err)
	ms := testMembers(17, "k")
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms[:16])))
	for _, id := range testIdentities(4000, "k") {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	p.DrainEvents()
	p.DrainCacheEvents()
	c := p.Cache()
	before := c.writeRounds.Load()
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms)))
	shards := map[uint64]bool{}
	moved := map[Identity]bool{}
	for _, e := range p.DrainEvents() {
		require.Equal(t, VirtualActorMoved, e.Kind)
		moved[e.Identity] = true
		shards[identityHash(0, e.Identity)&c.mask] = true
	}
	require.Greater(t, len(moved), len(shards))
	require.Equal(t, uint64(len(shards)), c.writeRounds.Load()-before)
	cached := p.DrainCacheEvents()
	require.Len(t, cached, len(moved))
	for _, e := range cached {
		require.Equal(t, CacheOwnerMoved, e.Reason)
		require.True(t, moved[e.Identity])
		_, ok := c.Get(e.Identity, t0)
		require.False(t, ok)
	}
}

// A leave drops the leaver's cached PIDs from many shards but records
// their events in one round of the event lock, not one per shard.
func TestLookupUpdateTopologyRecordsAbsentDropsInOneRound(t *testing.T) {
	cfg := DefaultLookupConfig()
	cfg.CacheCapacity = 4096
	p, err := NewPartitionIdentityLookup(cfg)
	require.NoError(t, err)
	ms := testMembers(16, "k")
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms)))
	for _, id := range testIdentities(4000, "k") {
		_, err := p.Get(id, t0)
		require.NoError(t, err)
	}
	p.DrainEvents()
	p.DrainCacheEvents()
	c := p.Cache()
	c.evMu.Lock()
	before := c.evRounds
	c.evMu.Unlock()
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms[1:])))
	c.evMu.Lock()
	rounds := c.evRounds - before
	c.evMu.Unlock()
	shards := map[uint64]bool{}
	ev := p.DrainCacheEvents()
	for _, e := range ev {
		require.Equal(t, CacheMemberAbsent, e.Reason)
		require.Equal(t, ms[0].Key(), e.Member)
		shards[identityHash(0, e.Identity)&c.mask] = true
	}
	require.Len(t, ev, len(p.DrainEvents()))
	require.Greater(t, len(shards), 1)
	require.Equal(t, uint64(1), rounds)
}

// ringDelta reuses the lookup's ringChange and kind changes: describing a
// view change allocates nothing once the lookup has seen one.
func TestLookupRingDeltaDoesNotAllocate(t *testing.T) {
	p, err := NewPartitionIdentityLookup(DefaultLookupConfig())
	require.NoError(t, err)
	ms := testMembers(9, "a", "b")
	r := NewRendezvous(DefaultLookupConfig().Hash)
	r1 := r.BuildFrom(nil, NewTopology(1, ms[:8]))
	r2 := r.BuildFrom(r1, NewTopology(2, ms[1:]))
	require.NoError(t, p.UpdateTopology(NewTopology(1, ms[:8])))
	d := p.ringDelta(r1, r2)
	require.NotNil(t, d)
	require.Len(t, d.kinds, 2)
	for _, kc := range d.kinds {
		require.Len(t, kc.added, 1)
		require.False(t, kc.full)
	}
	require.Zero(t, testing.AllocsPerRun(100, func() { p.ringDelta(r1, r2) }))
}

// Buffers handed back with ReuseEventBuffers record the next events: a
// view change after the first one writes its activation and cache events
// into the drained slices (no new buffers), and the events are those a
// lookup without reuse records.
func TestLookupReuseEventBuffers(t *testing.T) {
	newLookup := func() *PartitionIdentityLookup {
		cfg := DefaultLookupConfig()
		cfg.CacheCapacity = 4096
		p, err := NewPartitionIdentityLookup(cfg)
		require.NoError(t, err)
		return p
	}
	reusing, fresh := newLookup(), newLookup()
	ms := testMembers(17, "k")
	ids := testIdentities(2000, "k")
	views := []Topology{NewTopology(1, ms[:16]), NewTopology(2, ms[1:]), NewTopology(3, ms[:16]), NewTopology(4, ms[1:])}
	var es []VirtualActorEvent
	var ces []PidCacheEvent
	for _, p := range []*PartitionIdentityLookup{reusing, fresh} {
		require.NoError(t, p.UpdateTopology(NewTopology(0, ms[1:])))
	}
	for round, v := range views {
		for _, p := range []*PartitionIdentityLookup{reusing, fresh} {
			for _, id := range ids {
				_, err := p.Get(id, t0)
				require.NoError(t, err)
			}
			require.NoError(t, p.UpdateTopology(v))
		}
		gotEs, gotCes := reusing.DrainEvents(), reusing.DrainCacheEvents()
		require.Equal(t, fresh.DrainEvents(), gotEs, "round %d", round)
		require.Equal(t, fresh.DrainCacheEvents(), gotCes, "round %d", round)
		require.NotEmpty(t, gotEs)
		require.NotEmpty(t, gotCes)
		if round >= 2 { // buffers large enough for a round since round 1
			require.Same(t, &es[:1][0], &gotEs[:1][0], "round %d: activation events in the reused buffer", round)
			require.Same(t, &ces[:1][0], &gotCes[:1][0], "round %d: cache events in the reused buffer", round)
		}
		es, ces = gotEs, gotCes
		reusing.ReuseEventBuffers(gotEs, gotCes)
		require.Zero(t, es[:cap(es)][0], "a reused buffer is cleared")
	}
}
