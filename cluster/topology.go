package cluster

import (
	"encoding/binary"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
)

// Topology is one view of the cluster: the live members sorted by ID (then
// incarnation), the provider's view epoch (it only grows), and a hash of the
// membership that every node computes alike.
type Topology struct {
	Members []Member
	Epoch   uint64
	Hash    uint64
}

// NewTopology builds a view from members in any order. The members slice is
// copied and sorted; the hash is TopologyHash of the result.
func NewTopology(epoch uint64, members []Member) Topology {
	ms := slices.Clone(members)
	slices.SortFunc(ms, compareMembers)
	return Topology{Members: ms, Epoch: epoch, Hash: TopologyHash(ms)}
}

func compareMembers(a, b Member) int {
	if c := strings.Compare(a.ID, b.ID); c != 0 {
		return c
	}
	switch {
	case a.Incarnation < b.Incarnation:
		return -1
	case a.Incarnation > b.Incarnation:
		return 1
	}
	return 0
}

// TopologyHash is xxhash64 (seed 0) over the members sorted by (ID,
// Incarnation); for each member in order it hashes the ID's length as a
// little-endian uint32, the ID's UTF-8 bytes and the incarnation as a
// little-endian uint64. The length prefix keeps ("ab","c") apart from
// ("a","bc"). The incarnation is included so that a node that restarted under
// the same ID changes the view. Members must already be sorted.
func TopologyHash(sorted []Member) uint64 {
	d := xxhash.New()
	var b [8]byte
	for _, m := range sorted {
		binary.LittleEndian.PutUint32(b[:4], uint32(len(m.ID)))
		_, _ = d.Write(b[:4])
		_, _ = d.WriteString(m.ID)
		binary.LittleEndian.PutUint64(b[:], m.Incarnation)
		_, _ = d.Write(b[:])
	}
	return d.Sum64()
}

// Member returns the member with the given ID.
func (t Topology) Member(id string) (Member, bool) {
	for _, m := range t.Members {
		if m.ID == id {
			return m, true
		}
	}
	return Member{}, false
}

// Diff returns the members of next that are not in prev (joined) and those of
// prev that are not in next (left), by Key.
func Diff(prev, next Topology) (joined, left []Member) {
	in := make(map[string]struct{}, len(prev.Members))
	for _, m := range prev.Members {
		in[m.Key()] = struct{}{}
	}
	out := make(map[string]struct{}, len(next.Members))
	for _, m := range next.Members {
		out[m.Key()] = struct{}{}
		if _, ok := in[m.Key()]; !ok {
			joined = append(joined, m)
		}
	}
	for _, m := range prev.Members {
		if _, ok := out[m.Key()]; !ok {
			left = append(left, m)
		}
	}
	return joined, left
}

// withoutBlocked returns t without the members whose key is in blocked,
// keeping t's hash and epoch: rings built from it stay bound to the
// provider's view. t is returned as it is when nothing is blocked.
func withoutBlocked[K comparable](t Topology, blocked map[K]struct{}, key func(Member) K) Topology {
	if len(blocked) == 0 {
		return t
	}
	ms := make([]Member, 0, len(t.Members))
	for _, m := range t.Members {
		if _, b := blocked[key(m)]; !b {
			ms = append(ms, m)
		}
	}
	t.Members = ms
	return t
}
