package cluster

// DefaultHashSeed is the rendezvous seed used when the config does not set
// one: the bytes "fraktor!" read as a little-endian uint64.
const DefaultHashSeed uint64 = 0x2172_6f74_6b61_7266

// HashConfig selects and seeds the owner-selection hash. Every member of a
// cluster (and every client) must use the same HashConfig, or they will
// disagree about owners.
type HashConfig struct {
	// Seed seeds every xxhash64 call of the rendezvous hash.
	Seed uint64
	// Weighted selects weighted rendezvous (logarithmic method): a member's
	// share of each kind is its EffectiveWeight over the kind's total.
	// When false, weights are ignored and every member gets an equal share.
	Weighted bool
}

// DefaultHashConfig returns unweighted rendezvous with DefaultHashSeed.
func DefaultHashConfig() HashConfig { return HashConfig{Seed: DefaultHashSeed} }

// Validate returns nil: every seed is valid. It exists so that HashConfig
// follows the Config convention when embedded in a larger config.
func (c HashConfig) Validate() error { return nil }

// Strategy returns the rendezvous strategy for this config.
func (c HashConfig) Strategy() HashStrategy { return NewRendezvous(c) }

// HashStrategy maps a topology to an owner function. Rendezvous (plain and
// weighted) is the only implementation today; others (Maglev, jump hash)
// can come later behind the same contract.
//
// Build is called once per new topology, by the goroutine that applies
// topology changes; it may allocate and take time proportional to the
// number of members. It must be deterministic: equal topologies give rings
// that choose equal owners, on every node and across restarts.
type HashStrategy interface {
	// Name names the algorithm and its hash, for logs and metrics.
	Name() string
	// Build precomputes the per-member state of view t. The caller must not
	// modify t.Members afterwards.
	Build(t Topology) Ring
}

// Ring answers owner queries for one view. A Ring is immutable: Owner is
// safe for concurrent use, does not allocate, and costs one identity hash
// plus a few arithmetic operations per member hosting the kind.
type Ring interface {
	// Hash is the topology hash of the view the ring was built from.
	Hash() uint64
	// Epoch is the view epoch the ring was built from.
	Epoch() uint64
	// Owner returns the member that owns id: always a member of the view
	// that hosts id.Kind. It returns ErrNoAuthority when the view has no
	// members and ErrNoSuchKind when none of them hosts id.Kind.
	Owner(id Identity) (Member, error)
}
