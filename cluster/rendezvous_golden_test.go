package cluster

import (
	"encoding/binary"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden vectors of the owner-selection hash (V1.1; docs/identity.md). They
// were produced by testdata/rendezvous_reference.py, an independent Python
// implementation written from the XXH64 specification and the documented
// byte layout. If one of these changes, every deployed cluster would move its
// grains: do not "update" them, fix the code.

func goldenTopology() Topology {
	return NewTopology(7, []Member{
		{ID: "node-e", Address: "10.0.0.5:4000", Kinds: []string{"cart"}, Weight: 2},
		{ID: "node-b", Address: "10.0.0.2:4000", Kinds: []string{"account"}, Weight: 3},
		{ID: "node-a", Address: "10.0.0.1:4000", Kinds: []string{"account", "cart"}, Weight: 1},
		{ID: "node-d", Address: "10.0.0.4:4000", Kinds: []string{"account", "cart"}, Weight: 5},
		{ID: "node-c", Address: "10.0.0.3:4000", Kinds: []string{"account", "cart"}},
	})
}

func TestGoldenHashes(t *testing.T) {
	assert.Equal(t, uint64(0x6dda8af40a318029), memberHash(DefaultHashSeed, "node-a"))
	assert.Equal(t, uint64(0x07fdef786ee3b535), identityHash(DefaultHashSeed, NewIdentity("ab", "c")))
	assert.Equal(t, uint64(0x41468c98c01d5b16), identityHash(DefaultHashSeed, NewIdentity("a", "bc")))
	mh := memberHash(DefaultHashSeed, "node-a")
	ih := identityHash(DefaultHashSeed, NewIdentity("account", "0"))
	assert.Equal(t, uint64(0x73769c9e4bd55e98), rendezvousScore(DefaultHashSeed, mh, ih))
	assert.Equal(t, 0x1.e246ab8d1001ep+1, weightedScore(0x73769c9e4bd55e98, 3), "weighted score, bit for bit")
	assert.Equal(t, uint64(0x21726f746b617266), DefaultHashSeed)
}

func TestGoldenOwners(t *testing.T) {
	golden := []struct {
		kind, id        string
		plain, weighted string
	}{
		{"account", "0", "node-a", "node-d"},
		{"account", "1", "node-d", "node-d"},
		{"account", "2", "node-b", "node-b"},
		{"account", "3", "node-c", "node-c"},
		{"account", "4", "node-c", "node-c"},
		{"account", "5", "node-c", "node-d"},
		{"account", "6", "node-c", "node-d"},
		{"account", "7", "node-c", "node-d"},
		{"cart", "x0", "node-a", "node-d"},
		{"cart", "x1", "node-c", "node-c"},
		{"cart", "x2", "node-d", "node-d"},
		{"cart", "x3", "node-d", "node-d"},
	}
	topo := goldenTopology()
	plain := NewRendezvous(HashConfig{Seed: DefaultHashSeed}).Build(topo)
	weighted := NewRendezvous(HashConfig{Seed: DefaultHashSeed, Weighted: true}).Build(topo)
	for _, g := range golden {
		t.Run(g.kind+"/"+g.id, func(t *testing.T) {
			id := NewIdentity(g.kind, g.id)
			m, err := plain.Owner(id)
			require.NoError(t, err)
			assert.Equal(t, g.plain, m.ID, "unweighted owner")
			m, err = weighted.Owner(id)
			require.NoError(t, err)
			assert.Equal(t, g.weighted, m.ID, "weighted owner")
		})
	}
}

// The specialised score (member lane precomputed) must equal plain XXH64
// over the documented 16 bytes, for any seed and hashes.
func TestRendezvousScoreIsXXH64OfLayout(t *testing.T) {
	rng := newTestRand(1)
	for range 2000 {
		seed, mh, ih := rng.Uint64(), rng.Uint64(), rng.Uint64()
		var buf [16]byte
		binary.LittleEndian.PutUint64(buf[:8], mh)
		binary.LittleEndian.PutUint64(buf[8:], ih)
		d := xxhash.NewWithSeed(seed)
		_, _ = d.Write(buf[:])
		require.Equal(t, d.Sum64(), rendezvousScore(seed, mh, ih))
	}
}

func TestIdentityHashLayout(t *testing.T) {
	id := NewIdentity("account", "42")
	d := xxhash.NewWithSeed(99)
	_, _ = d.Write([]byte{7, 0, 0, 0})
	_, _ = d.WriteString("account")
	_, _ = d.Write([]byte{2, 0, 0, 0})
	_, _ = d.WriteString("42")
	assert.Equal(t, d.Sum64(), identityHash(99, id))
	assert.NotEqual(t, identityHash(0, NewIdentity("ab", "c")), identityHash(0, NewIdentity("a", "bc")))
}
