package cluster

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newTestLedger(t *testing.T, hash, epoch uint64) *ActivationLedger {
	t.Helper()
	l := NewActivationLedger()
	require.NoError(t, l.SetView(hash, epoch))
	return l
}

// V1.2, V1.3: many goroutines race to acquire the same identities; exactly
// one lease per identity is granted, the others see the holder.
func TestLedgerOneLeasePerIdentityUnderConcurrency(t *testing.T) {
	l := newTestLedger(t, 0xabc, 1)
	ids := testIdentities(200, "k")
	const workers = 8
	var granted [workers][]Lease
	var refused atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for _, id := range ids {
				lease, err := l.Acquire(id, fmt.Sprintf("node-%d", w), 0xabc)
				if err == nil {
					granted[w] = append(granted[w], lease)
					continue
				}
				var held *LeaseHeldError
				if !errors.As(err, &held) || held.Holder.Identity != id || !held.Holder.Status.Holds() {
					t.Errorf("unexpected refusal for %s: %v", id, err)
				}
				refused.Add(1)
			}
		})
	}
	wg.Wait()
	winners := map[Identity]Lease{}
	for _, ls := range granted {
		for _, lease := range ls {
			_, dup := winners[lease.Identity]
			require.False(t, dup, "two leases granted for %s", lease.Identity)
			winners[lease.Identity] = lease
		}
	}
	assert.Len(t, winners, len(ids))
	assert.Equal(t, int64(len(ids)*(workers-1)), refused.Load())
	assert.Equal(t, len(ids), l.Held())
	for id, lease := range winners {
		cur, ok := l.Lookup(id)
		require.True(t, ok)
		assert.Equal(t, lease, cur)
	}
}

func TestLedgerAcquireRefusals(t *testing.T) {
	l := newTestLedger(t, 0x1, 3)
	id := NewIdentity("k", "1")

	_, err := l.Acquire(id, "a", 0x2)
	assert.ErrorIs(t, err, ErrOwnershipChanged, "topology hash mismatch")
	_, err = l.Acquire(Identity{Kind: "k"}, "a", 0x1)
	assert.ErrorIs(t, err, ErrInvalidIdentity)
	_, err = l.Acquire(id, "", 0x1)
	assert.ErrorIs(t, err, ErrNoAuthority)

	lease, err := l.Acquire(id, "a", 0x1)
	require.NoError(t, err)
	assert.Equal(t, LeaseStatus{State: LeaseActive}, lease.Status)
	assert.Equal(t, uint64(0x1), lease.TopologyHash)
	assert.Equal(t, uint64(3), lease.Epoch)
	_, err = l.Acquire(id, "b", 0x1)
	assert.ErrorIs(t, err, ErrLeaseHeld)
	var held *LeaseHeldError
	require.ErrorAs(t, err, &held)
	assert.Equal(t, lease, held.Holder)
	assert.Contains(t, err.Error(), "cluster: activation lease of k/1 held by a")

	// A new view: old-hash requests are refused, new ones see the held lease.
	require.NoError(t, l.SetView(0x9, 4))
	_, err = l.Acquire(NewIdentity("k", "2"), "a", 0x1)
	assert.ErrorIs(t, err, ErrOwnershipChanged)
	_, err = l.Acquire(id, "b", 0x9)
	assert.ErrorIs(t, err, ErrLeaseHeld)
	assert.ErrorIs(t, l.SetView(0x1, 3), ErrStaleView)
}

func TestLedgerReleaseAndTokens(t *testing.T) {
	l := newTestLedger(t, 0x1, 5)
	id := NewIdentity("k", "1")
	first, err := l.Acquire(id, "a", 0x1)
	require.NoError(t, err)
	require.NoError(t, l.CheckToken(id, first.Token))

	_, err = l.Release(id, first.LeaseID+100)
	assert.ErrorIs(t, err, ErrStaleLease)
	_, err = l.Release(NewIdentity("k", "none"), 1)
	assert.ErrorIs(t, err, ErrLeaseNotFound)

	released, err := l.Release(id, first.LeaseID)
	require.NoError(t, err)
	assert.Equal(t, LeaseReleased, released.Status.State)
	assert.Zero(t, l.Len())
	assert.ErrorIs(t, l.CheckToken(id, first.Token), ErrLeaseNotFound)

	// Tokens only grow for an identity: same view, then a later view.
	second, err := l.Acquire(id, "a", 0x1)
	require.NoError(t, err)
	assert.True(t, first.Token.Less(second.Token))
	assert.ErrorIs(t, l.CheckToken(id, first.Token), ErrStaleLease, "stale activation's write rejected")
	require.NoError(t, l.CheckToken(id, second.Token))
	_, err = l.Revoke(id)
	require.NoError(t, err)
	require.NoError(t, l.SetView(0x2, 6))
	third, err := l.Acquire(id, "b", 0x2)
	require.NoError(t, err, "a revoked lease does not hold the identity")
	assert.True(t, second.Token.Less(third.Token))
	assert.Equal(t, FencingToken{Epoch: 6, Seq: third.Token.Seq}, third.Token)
	assert.Equal(t, 1, FencingToken{Epoch: 7}.Compare(third.Token), "a later epoch wins over any sequence")
	assert.True(t, FencingToken{}.IsZero())
}

// V1.4, B2.3: revoking a member revokes all its holding leases at once.
func TestLedgerRevokeMember(t *testing.T) {
	l := newTestLedger(t, 0x1, 1)
	ids := testIdentities(10, "k")
	for i, id := range ids {
		_, err := l.Acquire(id, fmt.Sprintf("node-%d", i%2), 0x1)
		require.NoError(t, err)
	}
	revoked := l.RevokeMember("node-1")
	require.Len(t, revoked, 5)
	for _, lease := range revoked {
		assert.Equal(t, "node-1", lease.Owner)
		assert.Equal(t, LeaseRevoked, lease.Status.State)
		assert.ErrorIs(t, l.CheckToken(lease.Identity, lease.Token), ErrStaleLease)
		_, err := l.Acquire(lease.Identity, "node-0", 0x1)
		assert.NoError(t, err, "revoked identity can be acquired again")
	}
	assert.Empty(t, l.RevokeMember("node-1"), "idempotent")
	assert.Equal(t, 10, l.Held())
	_, err := l.Revoke(NewIdentity("k", "missing"))
	assert.ErrorIs(t, err, ErrLeaseNotFound)
}

// Graceful shutdown with an injected clock: Releasing leases past their
// deadline become TimedOut; released ones leave the ledger.
func TestLedgerShutdownDeadlines(t *testing.T) {
	l := newTestLedger(t, 0x1, 1)
	ids := testIdentities(3, "k")
	leases := make([]Lease, len(ids))
	for i, id := range ids {
		var err error
		leases[i], err = l.Acquire(id, "self", 0x1)
		require.NoError(t, err)
	}
	deadline := t0.Add(30 * time.Second)
	releasing := l.BeginShutdown(deadline)
	require.Len(t, releasing, 3)
	for _, lease := range releasing {
		assert.Equal(t, LeaseStatus{State: LeaseReleasing, Deadline: deadline}, lease.Status)
	}
	assert.True(t, l.ShuttingDown())
	_, err := l.Acquire(NewIdentity("k", "new"), "self", 0x1)
	assert.ErrorIs(t, err, ErrShuttingDown)
	require.NoError(t, l.CheckToken(ids[0], leases[0].Token), "a stopping activation may still flush")

	_, err = l.Release(ids[0], leases[0].LeaseID)
	require.NoError(t, err)
	// One releasing lease gets more time.
	_, err = l.MarkReleasing(ids[2], leases[2].LeaseID, t0.Add(time.Minute))
	require.NoError(t, err)

	assert.Empty(t, l.ExpireReleasing(t0.Add(29*time.Second)))
	timedOut := l.ExpireReleasing(t0.Add(30 * time.Second))
	require.Len(t, timedOut, 1)
	assert.Equal(t, ids[1], timedOut[0].Identity)
	assert.Equal(t, LeaseTimedOut, timedOut[0].Status.State)
	assert.Equal(t, 1, l.Held())

	_, err = l.MarkReleasing(ids[1], leases[1].LeaseID, t0)
	assert.ErrorIs(t, err, ErrStaleLease, "a timed-out lease cannot release again")
	assert.Equal(t, []Identity{ids[1], ids[2]}, leaseIdentities(l.Leases()))
	assert.Len(t, l.ExpireReleasing(t0.Add(time.Hour)), 1)
	assert.Zero(t, l.Held())
}

func leaseIdentities(ls []Lease) []Identity {
	out := make([]Identity, len(ls))
	for i, lease := range ls {
		out[i] = lease.Identity
	}
	return out
}

func TestLeaseStateString(t *testing.T) {
	for s, want := range map[LeaseState]string{
		LeaseActive: "active", LeaseRevoked: "revoked", LeaseReleasing: "releasing",
		LeaseReleased: "released", LeaseTimedOut: "timed-out", 0: "lease-state(0)",
	} {
		assert.Equal(t, want, s.String())
	}
}
