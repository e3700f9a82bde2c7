package testkit

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fraktor-go/fraktor/cluster"
)

// ErrRegistryCut: the member cannot reach the registry (PartitionRegistry,
// Pause) or is dead (Kill), so its Join fails.
var ErrRegistryCut = errors.New("testkit: registry unreachable")

// memberRegistry is one member's view of the shared MemoryRegistry: the
// fault injection between that member and the registry. While cut, the
// member's renewals fail, it gets no views and a Join (its rejoin after
// fencing) fails; a dead member's Join fails for good. It implements
// cluster.Provider, cluster.LeaseTimer and cluster.Evictor.
type memberRegistry struct {
	reg *cluster.MemoryRegistry

	mu     sync.Mutex
	cuts   int  // PartitionRegistry and Pause each hold one
	dead   bool // killed: a dead process does not join
	keys   []string
	joined int
}

var (
	_ cluster.Provider   = (*memberRegistry)(nil)
	_ cluster.LeaseTimer = (*memberRegistry)(nil)
	_ cluster.Evictor    = (*memberRegistry)(nil)
)

// Join implements cluster.Provider.
func (r *memberRegistry) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.dead:
		return nil, fmt.Errorf("%w: the member is dead", ErrRegistryCut)
	case r.cuts > 0:
		return nil, fmt.Errorf("%w: %s", ErrRegistryCut, self.Key())
	}
	m, err := r.reg.Join(ctx, self)
	if err != nil {
		return nil, err
	}
	r.keys = append(r.keys, self.Key())
	r.joined++
	return m, nil
}

// LeaseTiming implements cluster.LeaseTimer.
func (r *memberRegistry) LeaseTiming() cluster.LeaseTiming { return r.reg.LeaseTiming() }

// Evict implements cluster.Evictor.
func (r *memberRegistry) Evict(ctx context.Context, m cluster.Member) error {
	return r.reg.Evict(ctx, m)
}

// cut adds one cut; the first one partitions every incarnation of the
// member from the registry.
func (r *memberRegistry) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cuts++
	if r.cuts == 1 {
		for _, k := range r.keys {
			r.reg.Partition(k)
		}
	}
}

// heal removes one cut; the last one heals, unless the member is dead: Kill
// ends a Pause (its cut) while it shuts the member down, and a healed dead
// member's Leave would reach the registry, a graceful exit.
func (r *memberRegistry) heal() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cuts == 0 {
		return
	}
	r.cuts--
	if r.cuts == 0 && !r.dead {
		for _, k := range r.keys {
			r.reg.Heal(k)
		}
	}
}

// kill cuts the member off for good: no renewals, no rejoin.
func (r *memberRegistry) kill() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dead = true
	for _, k := range r.keys {
		r.reg.Partition(k)
	}
}
