package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// UpdateTopology computes an owner in full only for the records that a
// joining member may take: one join into 16 members with 4,000 records
// checks about 4000/17 of them, not all 4,000.
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
	p.ownerChecks = 0
	require.NoError(t, p.UpdateTopology(NewTopology(2, ms)))
	moved := 0
	for _, e := range p.DrainEvents() {
		require.Equal(t, VirtualActorMoved, e.Kind)
		moved++
	}
	require.Positive(t, moved)
	require.GreaterOrEqual(t, p.ownerChecks, moved)
	require.Less(t, p.ownerChecks, 2*moved+50, "owner computations for one join (moved %d of 4000)", moved)

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
		for _, id := range ids[:rng.IntN(len(ids))] { // resolve again: new and reactivated records
			_, _ = p.Get(id, t0)
		}
		p.DrainEvents()
		p.DrainCacheEvents()
	}
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
	require.Equal(t, p.ownerChecks, p.recordVisits, "a join visits only the records it may take")
	require.Less(t, p.recordVisits, 2*moved+50)

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
	require.Equal(t, invalidated+p.ownerChecks, p.recordVisits)
	require.Less(t, p.ownerChecks, 2*moved+50)
}
