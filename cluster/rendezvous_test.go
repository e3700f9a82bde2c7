package cluster

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cespare/xxhash/v2"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// referenceOwner is owner selection written naively from the documented
// formulas, to check the precomputed ring against.
func referenceOwner(cfg HashConfig, t Topology, id Identity) (string, bool) {
	ih := identityHash(cfg.Seed, id)
	best, found := "", false
	var bestScore uint64
	var bestW float64
	for _, m := range t.Members {
		if !m.HasKind(id.Kind) {
			continue
		}
		s := rendezvousScore(cfg.Seed, memberHash(cfg.Seed, m.ID), ih)
		w := weightedScore(s, m.Weight)
		better := s > bestScore
		if cfg.Weighted {
			better = w > bestW || (w == bestW && s > bestScore)
		}
		if !found || better {
			best, bestScore, bestW, found = m.ID, s, w, true
		}
	}
	return best, found
}

func randomTopology(rng interface {
	IntN(int) int
	Uint32N(uint32) uint32
}, kinds []string) Topology {
	n := 1 + rng.IntN(40)
	ms := testMembers(n)
	for i := range ms {
		for _, k := range kinds {
			if rng.IntN(3) > 0 {
				ms[i].Kinds = append(ms[i].Kinds, k)
			}
		}
		ms[i].Weight = rng.Uint32N(6) // 0 counts as 1
		if rng.IntN(4) == 0 {
			ms[i].Weight = 7 // sometimes uniform-ish
		}
	}
	return NewTopology(1, ms)
}

// V1.1: the owner is always a member of the view hosting the kind, and the
// ring agrees with the naive formula (plain, weighted, uniform weights).
func TestOwnerIsMemberHostingKind(t *testing.T) {
	kinds := []string{"a", "b", "c"}
	for _, weighted := range []bool{false, true} {
		t.Run(fmt.Sprintf("weighted=%v", weighted), func(t *testing.T) {
			rng := newTestRand(7)
			for round := range 200 {
				cfg := HashConfig{Seed: rng.Uint64(), Weighted: weighted}
				topo := randomTopology(rng, kinds)
				ring := NewRendezvous(cfg).Build(topo)
				for j := range 50 {
					id := NewIdentity(kinds[rng.IntN(len(kinds))], fmt.Sprintf("r%d-%d", round, j))
					m, err := ring.Owner(id)
					want, ok := referenceOwner(cfg, topo, id)
					if !ok {
						require.ErrorIs(t, err, ErrNoSuchKind)
						continue
					}
					require.NoError(t, err)
					require.True(t, m.HasKind(id.Kind), "owner %s does not host %s", m.ID, id.Kind)
					got, inView := topo.Member(m.ID)
					require.True(t, inView)
					require.Equal(t, got.Address, m.Address)
					require.Equal(t, want, m.ID, "ring disagrees with formula for %s", id)
				}
			}
		})
	}
}

func TestOwnerErrors(t *testing.T) {
	r := NewRendezvous(DefaultHashConfig())
	_, err := r.Build(NewTopology(1, nil)).Owner(NewIdentity("a", "1"))
	assert.ErrorIs(t, err, ErrNoAuthority)
	_, err = r.Build(NewTopology(1, testMembers(3, "a"))).Owner(NewIdentity("b", "1"))
	assert.ErrorIs(t, err, ErrNoSuchKind)
	assert.Equal(t, "rendezvous-xxh64", r.Name())
	assert.Equal(t, "weighted-rendezvous-xxh64", NewRendezvous(HashConfig{Weighted: true}).Name())
}

func ownersOf(ring Ring, ids []Identity) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		m, err := ring.Owner(id)
		if err != nil {
			panic(err)
		}
		out[i] = m.ID
	}
	return out
}

// Adding one member to N moves about 1/(N+1) of the identities, all of them
// to the new member; removing a member moves exactly its identities.
func TestMinimalDisruption(t *testing.T) {
	const nIDs = 20000
	ids := testIdentities(nIDs, "k")
	for _, weighted := range []bool{false, true} {
		for _, n := range []int{3, 10, 50} {
			t.Run(fmt.Sprintf("weighted=%v/n=%d", weighted, n), func(t *testing.T) {
				cfg := HashConfig{Seed: 42, Weighted: weighted}
				ms := testMembers(n+1, "k")
				for i := range ms {
					ms[i].Weight = 1 // equal weights: expected share of the newcomer is 1/(N+1)
				}
				before := ownersOf(NewRendezvous(cfg).Build(NewTopology(1, ms[:n])), ids)
				after := ownersOf(NewRendezvous(cfg).Build(NewTopology(2, ms)), ids)
				newcomer := ms[n].ID
				moved := 0
				for i := range ids {
					if before[i] != after[i] {
						moved++
						require.Equal(t, newcomer, after[i], "an identity moved to an old member")
					}
				}
				want := 1.0 / float64(n+1)
				got := float64(moved) / nIDs
				// binomial sd <= 0.0035 at nIDs=20000; 0.015 is over 4 sd
				assert.InDelta(t, want, got, 0.015, "moved fraction")

				// Removing member 0 moves only the identities it owned.
				gone := ms[0].ID
				removed := ownersOf(NewRendezvous(cfg).Build(NewTopology(3, ms[1:n])), ids)
				for i := range ids {
					if before[i] != gone {
						require.Equal(t, before[i], removed[i], "identity of a staying member moved")
					} else {
						require.NotEqual(t, gone, removed[i])
					}
				}
			})
		}
	}
}

// Weighted rendezvous gives each member a share of weight/sum(weights):
// over 100k identities each share is within 0.01 of its target (binomial sd
// <= 0.0016, so over 6 sd).
func TestWeightedSharesConverge(t *testing.T) {
	const nIDs = 100000
	ms := testMembers(5, "k")
	weights := []uint32{1, 2, 3, 4, 10}
	total := 0.0
	for i, w := range weights {
		ms[i].Weight = w
		total += float64(w)
	}
	ring := NewRendezvous(HashConfig{Seed: 3, Weighted: true}).Build(NewTopology(1, ms))
	counts := map[string]int{}
	for _, owner := range ownersOf(ring, testIdentities(nIDs, "k")) {
		counts[owner]++
	}
	for i, m := range ms {
		assert.InDelta(t, float64(weights[i])/total, float64(counts[m.ID])/nIDs, 0.01, "share of %s (weight %d)", m.ID, weights[i])
	}

	// Unweighted ignores the weights: equal shares.
	plain := NewRendezvous(HashConfig{Seed: 3}).Build(NewTopology(1, ms))
	counts = map[string]int{}
	for _, owner := range ownersOf(plain, testIdentities(nIDs, "k")) {
		counts[owner]++
	}
	for _, m := range ms {
		assert.InDelta(t, 0.2, float64(counts[m.ID])/nIDs, 0.01, "unweighted share of %s", m.ID)
	}
}

// Same inputs, same owners: member order, address, incarnation and epoch do
// not matter; the seed does.
func TestOwnerDeterminism(t *testing.T) {
	ids := testIdentities(2000, "k")
	ms := testMembers(20, "k")
	cfg := HashConfig{Seed: 11}
	base := ownersOf(NewRendezvous(cfg).Build(NewTopology(1, ms)), ids)

	shuffled := append([]Member(nil), ms...)
	rng := newTestRand(5)
	rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	for i := range shuffled {
		shuffled[i].Incarnation = 99 // restarted everywhere
		shuffled[i].Address = "elsewhere:1"
	}
	assert.Equal(t, base, ownersOf(NewRendezvous(cfg).Build(NewTopology(9, shuffled)), ids), "restart or reorder changed owners")

	other := ownersOf(NewRendezvous(HashConfig{Seed: 12}).Build(NewTopology(1, ms)), ids)
	diff := 0
	for i := range base {
		if base[i] != other[i] {
			diff++
		}
	}
	assert.Greater(t, diff, len(ids)/2, "the seed must change the assignment")
}

func TestOwnerDoesNotAllocate(t *testing.T) {
	for _, weighted := range []bool{false, true} {
		ms := testMembers(64, "k")
		for i := range ms {
			ms[i].Weight = uint32(i%4 + 1)
		}
		ring := NewRendezvous(HashConfig{Seed: 1, Weighted: weighted}).Build(NewTopology(1, ms))
		id := NewIdentity("k", "some-grain-id")
		allocs := testing.AllocsPerRun(1000, func() {
			if _, err := ring.Owner(id); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs, "weighted=%v", weighted)
	}
}

func TestWeightedScoreOrdersByWeight(t *testing.T) {
	s := uint64(1) << 63
	assert.Greater(t, weightedScore(s, 2), weightedScore(s, 1))
	assert.Equal(t, weightedScore(s, 0), weightedScore(s, 1), "weight 0 counts as 1")
	assert.Greater(t, weightedScore(^uint64(0), 1), 0.0)
	assert.Greater(t, weightedScore(0, 1), 0.0, "u is never 0")
}

// digestHash is XXH64 with seed over the concatenation of parts, each
// preceded by its LE32 length, through the streaming xxhash.Digest: the
// documented layout of memberHash (one part) and identityHash (two).
func digestHash(seed uint64, parts ...string) uint64 {
	d := xxhash.NewWithSeed(seed)
	for _, p := range parts {
		_, _ = d.Write(binary.LittleEndian.AppendUint32(nil, uint32(len(p))))
		_, _ = d.WriteString(p)
	}
	return d.Sum64()
}

// The short-input XXH64 computed on the stack equals the streaming digest
// at every length below 32 bytes, and memberHash and identityHash equal
// the digest of their layout on both sides of the short-input bound.
func TestXXH64ShortMatchesDigest(t *testing.T) {
	rng := newTestRand(13)
	buf := make([]byte, xxShortMax)
	for n := range xxShortMax {
		for range 50 {
			for i := range buf[:n] {
				buf[i] = byte(rng.Uint32())
			}
			seed := rng.Uint64()
			d := xxhash.NewWithSeed(seed)
			_, _ = d.Write(buf[:n])
			require.Equal(t, d.Sum64(), xxh64Short(seed, buf[:n]), "length %d, seed %#x", n, seed)
		}
	}
	text := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	for kl := range 30 {
		for il := range 30 {
			seed := rng.Uint64()
			id := NewIdentity(text(kl), text(il))
			require.Equal(t, digestHash(seed, id.Kind, id.ID), identityHash(seed, id), "kind %d bytes, id %d bytes", kl, il)
		}
		seed := rng.Uint64()
		m := text(kl)
		require.Equal(t, digestHash(seed, m), memberHash(seed, m), "member %d bytes", kl)
	}
}

// BuildFrom gives the ring Build gives, for random pairs of views: members
// joining, leaving and restarting, kinds and weights changing, views out of
// order, and a previous ring of another seed or of another strategy.
func TestRendezvousBuildFromEqualsBuild(t *testing.T) {
	rng := newTestRand(21)
	kinds := []string{"a", "b", "c"}
	for round := range 300 {
		cfg := HashConfig{Seed: rng.Uint64N(3), Weighted: round%2 == 1}
		r := NewRendezvous(cfg)
		before := randomTopology(rng, kinds)
		after := randomTopology(rng, kinds)
		for i := range after.Members {
			if rng.IntN(4) == 0 {
				after.Members[i].Incarnation++ // a restart: same ID, same lane
			}
		}
		after = NewTopology(2, after.Members)
		if rng.IntN(5) == 0 {
			rng.Shuffle(len(after.Members), func(i, j int) { after.Members[i], after.Members[j] = after.Members[j], after.Members[i] })
		}
		prev := r.BuildFrom(nil, before)
		switch rng.IntN(6) {
		case 0:
			prev = NewRendezvous(HashConfig{Seed: cfg.Seed + 1}).BuildFrom(nil, before)
		case 1:
			prev = nil
		case 2:
			prev = r.Build(before) // keeps no member hashes
		}
		got := r.BuildFrom(prev, after).(*rendezvousRing)
		for i, m := range after.Members {
			require.Equal(t, memberLane(cfg.Seed, memberHash(cfg.Seed, m.ID)), got.lanes[i], "round %d: lane of %s", round, m.ID)
		}
		got.lanes = nil // the one field Build leaves empty
		require.Equal(t, r.Build(after), Ring(got), "round %d", round)
	}
}

// BuildFrom takes the member lanes of the previous ring instead of hashing
// the members again: a lane planted in the previous ring shows in the new
// one, for the member of that ID only.
func TestRendezvousBuildFromReusesLanes(t *testing.T) {
	r := NewRendezvous(DefaultHashConfig())
	ms := testMembers(10, "k")
	prev := r.BuildFrom(nil, NewTopology(1, ms[:8])).(*rendezvousRing)
	prev.lanes[3] = 42 // ms[3]
	next := r.BuildFrom(prev, NewTopology(2, ms[2:])).(*rendezvousRing)
	require.True(t, next.sorted)
	require.Equal(t, uint64(42), next.lanes[1], "ms[3]'s lane comes from the previous ring")
	for i, m := range next.topo.Members {
		if m.ID != ms[3].ID {
			require.Equal(t, memberLane(DefaultHashSeed, memberHash(DefaultHashSeed, m.ID)), next.lanes[i], m.ID)
		}
	}
}
