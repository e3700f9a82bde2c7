package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// heldRejoin is a provider whose first Join passes straight through and
// whose later Joins (the runtime's rejoins) report on entered and wait for
// release. The memberships it returns report each Leave on left.
type heldRejoin struct {
	cluster.Provider
	joins   atomic.Int32
	entered chan struct{}
	release chan struct{}
	left    chan cluster.Member
}

func (h *heldRejoin) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if h.joins.Add(1) > 1 {
		h.entered <- struct{}{}
		<-h.release
	}
	m, err := h.Provider.Join(ctx, self)
	if err != nil {
		return nil, err
	}
	return &reportLeave{Membership: m, left: h.left}, nil
}

func (h *heldRejoin) LeaseTiming() cluster.LeaseTiming {
	return h.Provider.(cluster.LeaseTimer).LeaseTiming()
}

type reportLeave struct {
	cluster.Membership
	left chan cluster.Member
}

func (r *reportLeave) Leave(ctx context.Context) error {
	err := r.Membership.Leave(ctx)
	r.left <- r.Self()
	return err
}

// A member shut down while it rejoins (after a self-fence) leaves no member
// registered: the rejoin's Join is held until Shutdown has left the old,
// ended membership, then completes; the new incarnation it registered must
// be left too, before Shutdown returns. Without that, the registry keeps the
// new incarnation until its lease expires and every other member sees a
// member that is gone.
func TestClusterShutdownDuringRejoinLeavesNoMember(t *testing.T) {
	reg := fastRegistry(t)
	h := &heldRejoin{Provider: reg, entered: make(chan struct{}, 1), release: make(chan struct{}),
		left: make(chan cluster.Member, 4)}
	b := startMemberWith(t, h, fastTiming, counterKind())
	awaitMembers(t, 1, b)
	old := b.c.Self()

	// Evicted, b's lease is revoked: it fences, ends that membership and
	// rejoins, which the provider holds.
	require.NoError(t, reg.Evict(context.Background(), old))
	select {
	case <-h.entered:
	case <-time.After(wait):
		t.Fatal("b never rejoined")
	}

	shut := make(chan error, 1)
	go func() { shut <- b.c.Shutdown(context.Background()) }()
	select {
	case m := <-h.left:
		require.Equal(t, old.Key(), m.Key(), "Shutdown leaves the membership current when it began")
	case <-time.After(wait):
		t.Fatal("Shutdown never left the old membership")
	}
	close(h.release)

	select {
	case err := <-shut:
		require.NoError(t, err)
	case <-time.After(wait):
		t.Fatal("Shutdown never returned")
	}
	require.Empty(t, reg.Topology().Members, "the incarnation the rejoin registered was left")
	require.Equal(t, int32(2), h.joins.Load())
	require.Equal(t, cluster.StatusStopped, b.c.Status())
}
