package cluster

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// Retire after Stop: a partitioned member cannot reach the registry
// (ErrPartitioned, retried later); once healed, its entry is removed at a
// new epoch with a released marker, before its lease TTL ran out; later
// calls return nil at once and change nothing.
func TestMemoryRetireAfterStopReleasesWhenReachable(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	latest(t, b)
	reg.Partition(a.Self().Key())
	require.NoError(t, a.Stop(context.Background()))

	r, ok := a.(Retirer)
	require.True(t, ok, "a MemoryRegistry membership is a Retirer")
	require.ErrorIs(t, r.Retire(context.Background()), ErrPartitioned)
	noSnapshot(t, b)
	require.Equal(t, []string{"a#1", "b#1"}, keys(reg.Topology()))

	clock.Advance(memRenew) // b renews; a's entry stays (TTL 3 s)
	reg.Heal(a.Self().Key())
	require.NoError(t, r.Retire(context.Background()))
	top := latest(t, b)
	require.Equal(t, []string{"b#1"}, keys(top))
	require.Equal(t, []Member{member("a", 1)}, b.Released())

	require.NoError(t, r.Retire(context.Background()))
	noSnapshot(t, b)
	require.Equal(t, top.Epoch, reg.Topology().Epoch)
}

// Retire of an incarnation the registry dropped already (its lease ran
// out) still records its released marker, at a new epoch: the others stop
// waiting W for it. Retire of a membership that runs ends it first.
func TestMemoryRetireAfterExpiryRecordsMarker(t *testing.T) {
	reg, clock := newManualRegistry(t)
	a := join(t, reg, member("a", 1))
	b := join(t, reg, member("b", 1))
	latest(t, b)
	require.NoError(t, a.Stop(context.Background()))
	clock.Advance(memTTL)
	expired := latest(t, b)
	require.Equal(t, []string{"b#1"}, keys(expired))
	require.Empty(t, b.Released())

	require.NoError(t, a.(Retirer).Retire(context.Background()))
	top := latest(t, b)
	require.Greater(t, top.Epoch, expired.Epoch)
	require.Equal(t, []Member{member("a", 1)}, b.Released())

	c := join(t, reg, member("c", 1))
	latest(t, b)
	require.NoError(t, c.(Retirer).Retire(context.Background()))
	require.Equal(t, ViewEnded, c.ViewState().Status, "Retire ended the running membership")
	require.Equal(t, MembershipLeaseReleased, c.Lease().Status)
	require.Equal(t, []string{"b#1"}, keys(latest(t, b)))
}
