package cluster

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"

	"github.com/cespare/xxhash/v2"
)

// The xxhash64 primes (XXH64 specification).
const (
	xxPrime1 uint64 = 0x9E3779B185EBCA87
	xxPrime2 uint64 = 0xC2B2AE3D27D4EB4F
	xxPrime3 uint64 = 0x165667B19E3779F9
	xxPrime4 uint64 = 0x85EBCA77C2B2AE63
	xxPrime5 uint64 = 0x27D4EB2F165667C5
)

// memberHash is the rendezvous hash of a member: XXH64 with seed over
// LE32(len(memberID)) || memberID (UTF-8 bytes). Only the ID is hashed, not
// the incarnation or address, so a member that restarts under the same ID
// owns the same identities again.
func memberHash(seed uint64, memberID string) uint64 {
	if n := 4 + len(memberID); n < xxShortMax {
		var buf [xxShortMax]byte
		binary.LittleEndian.PutUint32(buf[:], uint32(len(memberID)))
		copy(buf[4:], memberID)
		return xxh64Short(seed, buf[:n])
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(memberID)))
	_, _ = d.Write(n[:])
	_, _ = d.WriteString(memberID)
	return d.Sum64()
}

// identityHash is the rendezvous hash of an identity: XXH64 with seed over
// LE32(len(Kind)) || Kind || LE32(len(ID)) || ID. The length prefixes keep
// {"ab","c"} apart from {"a","bc"}. It is also the PidCache's shard hash,
// so it runs on every cache access.
func identityHash(seed uint64, id Identity) uint64 {
	if n := 8 + len(id.Kind) + len(id.ID); n < xxShortMax {
		var buf [xxShortMax]byte
		binary.LittleEndian.PutUint32(buf[:], uint32(len(id.Kind)))
		k := 4 + copy(buf[4:], id.Kind)
		binary.LittleEndian.PutUint32(buf[k:], uint32(len(id.ID)))
		copy(buf[k+4:], id.ID)
		return xxh64Short(seed, buf[:n])
	}
	var d xxhash.Digest
	d.ResetWithSeed(seed)
	var n [4]byte
	binary.LittleEndian.PutUint32(n[:], uint32(len(id.Kind)))
	_, _ = d.Write(n[:])
	_, _ = d.WriteString(id.Kind)
	binary.LittleEndian.PutUint32(n[:], uint32(len(id.ID)))
	_, _ = d.Write(n[:])
	_, _ = d.WriteString(id.ID)
	return d.Sum64()
}

// xxShortMax bounds the inputs that xxh64Short hashes: XXH64 of fewer than
// 32 bytes has no stripe loop.
const xxShortMax = 32

// xxh64Short is XXH64 of b (len(b) < xxShortMax) with seed: the
// specification's path for short inputs, which is all but the longest
// identities and member IDs. Hashing them here, from a buffer on the stack,
// costs a third of the streaming xxhash.Digest (its Write and Sum64 calls
// and state copies), and identityHash runs on every PidCache access and
// every record's lane; TestXXH64ShortMatchesDigest holds it to the Digest.
func xxh64Short(seed uint64, b []byte) uint64 {
	h := seed + xxPrime5 + uint64(len(b))
	for ; len(b) >= 8; b = b[8:] {
		h ^= xxRound(binary.LittleEndian.Uint64(b))
		h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	}
	if len(b) >= 4 {
		h ^= uint64(binary.LittleEndian.Uint32(b)) * xxPrime1
		h = bits.RotateLeft64(h, 23)*xxPrime2 + xxPrime3
		b = b[4:]
	}
	for _, c := range b {
		h ^= uint64(c) * xxPrime5
		h = bits.RotateLeft64(h, 11) * xxPrime1
	}
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// rendezvousScore is the score of a member for an identity:
// XXH64 with seed over the 16 bytes LE64(memberHash) || LE64(identityHash).
// Unweighted rendezvous picks the member with the highest score.
func rendezvousScore(seed, memberHash, identityHash uint64) uint64 {
	return scoreFinish(memberLane(seed, memberHash) ^ xxRound(identityHash))
}

// weightedScore is the logarithmic-method score of weighted rendezvous:
// -weight / ln(u) with u = (float64(score>>12) + 0.5) / 2^52, which maps the
// 64-bit score into the open interval (0, 1); every step of that is exact in
// IEEE-754 double precision (u is never 0 or 1). A member then wins an identity
// with probability weight / (sum of the candidates' weights). Weight 0
// counts as 1, as in Member.EffectiveWeight.
func weightedScore(score uint64, weight uint32) float64 {
	if weight == 0 {
		weight = 1
	}
	return -float64(weight) / math.Log(unitInterval(score))
}

func unitInterval(score uint64) float64 {
	return (float64(score>>12) + 0.5) * 0x1p-52
}

// xxRound is XXH64's round(0, lane).
func xxRound(lane uint64) uint64 {
	return bits.RotateLeft64(lane*xxPrime2, 31) * xxPrime1
}

// memberLane is the XXH64 state of a 16-byte input after its first lane
// (the member hash): everything that does not depend on the identity.
func memberLane(seed, memberHash uint64) uint64 {
	h := seed + xxPrime5 + 16
	h ^= xxRound(memberHash)
	return bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
}

// scoreFinish completes XXH64 of the 16-byte input from memberLane's state
// xor'ed with the identity lane's round.
func scoreFinish(h uint64) uint64 {
	h = bits.RotateLeft64(h, 27)*xxPrime1 + xxPrime4
	h ^= h >> 33
	h *= xxPrime2
	h ^= h >> 29
	h *= xxPrime3
	h ^= h >> 32
	return h
}

// Rendezvous is highest-random-weight owner selection over xxhash64 (see
// docs/identity.md for the exact bytes). It is immutable and safe for
// concurrent use.
type Rendezvous struct {
	seed     uint64
	weighted bool
}

// NewRendezvous returns the rendezvous strategy of cfg.
func NewRendezvous(cfg HashConfig) *Rendezvous {
	return &Rendezvous{seed: cfg.Seed, weighted: cfg.Weighted}
}

// Name implements HashStrategy.
func (r *Rendezvous) Name() string {
	if r.weighted {
		return "weighted-rendezvous-xxh64"
	}
	return "rendezvous-xxh64"
}

type rendezvousCandidate struct {
	lane   uint64 // memberLane(seed, memberHash(seed, ID))
	weight float64
	index  int // into Topology.Members
}

type rendezvousKind struct {
	cands   []rendezvousCandidate
	uniform bool // all weights equal: weighted order == score order
}

type rendezvousRing struct {
	seed     uint64
	weighted bool
	topo     Topology
	kinds    map[string]*rendezvousKind
	sorted   bool     // topo.Members are sorted by compareMembers (view order)
	lanes    []uint64 // memberLane of each of topo.Members, by index; kept by BuildFrom only
}

// Build implements HashStrategy: it hashes every member once and groups the
// members by kind, in view order (ID, incarnation).
func (r *Rendezvous) Build(t Topology) Ring { return r.build(t, nil, false) }

// BuildFrom returns the ring of view t, as Build does, reusing the member
// hashes of prev, the ring of the previous view, when prev is a ring that
// BuildFrom made with the same seed and both views are sorted (as
// NewTopology sorts them): a view change then hashes only the members that
// joined. Any other prev is ignored. The ring keeps its member hashes for
// the next BuildFrom (one word per member, which Build does not keep).
func (r *Rendezvous) BuildFrom(prev Ring, t Topology) Ring {
	p, ok := prev.(*rendezvousRing)
	if !ok || p.seed != r.seed || !p.sorted || p.lanes == nil {
		p = nil
	}
	return r.build(t, p, true)
}

// build is Build, taking the member lanes of prev (sorted, same seed, with
// lanes) for the IDs it holds as long as t is sorted: a merge walk costs
// about one string comparison per member, a member hash several times
// that. keep records the ring's lanes.
func (r *Rendezvous) build(t Topology, prev *rendezvousRing, keep bool) Ring {
	ring := &rendezvousRing{
		seed:     r.seed,
		weighted: r.weighted,
		topo:     t,
		kinds:    make(map[string]*rendezvousKind),
		sorted:   true,
	}
	if keep {
		ring.lanes = make([]uint64, len(t.Members))
	}
	var was []Member
	if prev != nil {
		was = prev.topo.Members
	}
	j := 0 // the first member of was whose ID is not below the ID of m
	for i, m := range t.Members {
		if i > 0 && ring.sorted && compareMembers(t.Members[i-1], m) >= 0 {
			ring.sorted = false
		}
		for ring.sorted && j < len(was) && was[j].ID < m.ID {
			j++
		}
		var lane uint64
		if ring.sorted && j < len(was) && was[j].ID == m.ID {
			lane = prev.lanes[j]
		} else {
			lane = memberLane(r.seed, memberHash(r.seed, m.ID))
		}
		if keep {
			ring.lanes[i] = lane
		}
		w := float64(m.EffectiveWeight())
		for k, kind := range m.Kinds {
			if slices.Contains(m.Kinds[:k], kind) {
				continue // listed twice: a member's kinds are few, a scan is cheaper than a set
			}
			rk := ring.kinds[kind]
			if rk == nil {
				rk = &rendezvousKind{uniform: true, cands: make([]rendezvousCandidate, 0, len(t.Members))}
				ring.kinds[kind] = rk
			}
			if len(rk.cands) > 0 && rk.cands[0].weight != w {
				rk.uniform = false
			}
			rk.cands = append(rk.cands, rendezvousCandidate{lane: lane, weight: w, index: i})
		}
	}
	return ring
}

func (r *rendezvousRing) Hash() uint64  { return r.topo.Hash }
func (r *rendezvousRing) Epoch() uint64 { return r.topo.Epoch }

// Owner implements Ring. Ties (equal scores, which need a 64-bit collision)
// go to the member that sorts first in the view.
func (r *rendezvousRing) Owner(id Identity) (Member, error) {
	i, err := r.ownerIndex(id)
	if err != nil {
		return Member{}, err
	}
	return r.topo.Members[i], nil
}

func (r *rendezvousRing) ownerIndex(id Identity) (int, error) {
	if len(r.topo.Members) == 0 {
		return -1, ErrNoAuthority
	}
	rk := r.kinds[id.Kind]
	if rk == nil {
		return -1, ErrNoSuchKind
	}
	lane := xxRound(identityHash(r.seed, id))
	cands := rk.cands
	best := 0
	bestScore := scoreFinish(cands[0].lane ^ lane)
	if !r.weighted || rk.uniform {
		for j := 1; j < len(cands); j++ {
			if s := scoreFinish(cands[j].lane ^ lane); s > bestScore {
				best, bestScore = j, s
			}
		}
		return cands[best].index, nil
	}
	bestW := -cands[0].weight / math.Log(unitInterval(bestScore))
	for j := 1; j < len(cands); j++ {
		s := scoreFinish(cands[j].lane ^ lane)
		w := -cands[j].weight / math.Log(unitInterval(s))
		if w > bestW || (w == bestW && s > bestScore) {
			best, bestScore, bestW = j, s, w
		}
	}
	return cands[best].index, nil
}
