package cluster

import (
	"fmt"
	"math/rand/v2"
)

// newTestRand returns a PRNG with a fixed seed, so property tests are
// reproducible.
func newTestRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// testMembers returns n members "m-000".. hosting kinds, weight 0.
func testMembers(n int, kinds ...string) []Member {
	ms := make([]Member, n)
	for i := range ms {
		ms[i] = Member{ID: fmt.Sprintf("m-%03d", i), Incarnation: 1, Address: fmt.Sprintf("10.0.%d.%d:4000", i/256, i%256), Kinds: kinds}
	}
	return ms
}

func testIdentities(n int, kind string) []Identity {
	ids := make([]Identity, n)
	for i := range ids {
		ids[i] = NewIdentity(kind, fmt.Sprintf("id-%d", i))
	}
	return ids
}
