package cluster

import (
	"fmt"
	"slices"
)

// Member is one node of the cluster as the membership provider sees it.
//
// ID names the node and is stable across restarts; Incarnation is new at every
// process start and is never resumed, so a restarted node is a different
// member. Address is where its remote transport listens. Kinds are the grain
// kinds it hosts. Weight scales its share of identities under weighted
// rendezvous hashing; 0 means 1.
type Member struct {
	ID          string
	Incarnation uint64
	Address     string
	Kinds       []string
	Weight      uint32
}

// Key is the member's unique key within a view: ID and incarnation.
func (m Member) Key() string { return fmt.Sprintf("%s#%d", m.ID, m.Incarnation) }

// HasKind reports whether the member hosts kind.
func (m Member) HasKind(kind string) bool { return slices.Contains(m.Kinds, kind) }

// EffectiveWeight returns Weight, or 1 when it is 0.
func (m Member) EffectiveWeight() uint32 {
	if m.Weight == 0 {
		return 1
	}
	return m.Weight
}
