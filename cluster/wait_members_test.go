package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// WaitForMembers returns once the member is ready with a view of n
// members; after it, on both members, one identity's Adds from either side
// reach one activation with its state (no move as the second member
// appears).
func TestClusterWaitForMembers(t *testing.T) {
	reg := newRegistry(t)
	a := startMember(t, reg, counterKind())
	b := startMember(t, reg, counterKind())
	ctx := ctxWait(t)
	for _, nd := range []node{a, b} {
		require.NoError(t, nd.c.WaitForMembers(ctx, 2))
		require.Equal(t, cluster.StatusReady, nd.c.Status())
		require.Len(t, nd.c.Members(), 2)
	}
	for i := range 20 {
		id := cluster.NewIdentity("counter", string(rune('a'+i)))
		ta, err := cluster.Request[*Total](ctx, a.c, id, &Add{N: 1})
		require.NoError(t, err)
		tb, err := cluster.Request[*Total](ctx, b.c, id, &Add{N: 1})
		require.NoError(t, err)
		require.Equal(t, 1, ta.N, "%s", id)
		require.Equal(t, 2, tb.N, "%s: B reached A's activation", id)
	}
	require.Equal(t, 20, a.c.ActiveCount()+b.c.ActiveCount())
}

// It ends with ctx, naming what it waited for, and with ErrShuttingDown
// once the member leaves.
func TestClusterWaitForMembersEnds(t *testing.T) {
	a := startMember(t, newRegistry(t), counterKind())
	require.NoError(t, a.c.WaitForMembers(ctxWait(t), 1))

	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := a.c.WaitForMembers(short, 2)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorContains(t, err, "waiting for 2 members (status ready, 1 members)")

	waiting := make(chan error, 1)
	go func() { waiting <- a.c.WaitForMembers(context.Background(), 2) }()
	require.NoError(t, a.c.Shutdown(ctxWait(t)))
	select {
	case err := <-waiting:
		require.ErrorIs(t, err, cluster.ErrShuttingDown)
	case <-time.After(wait):
		t.Fatal("WaitForMembers outlived the member")
	}
	require.ErrorIs(t, a.c.WaitForMembers(context.Background(), 1), cluster.ErrShuttingDown)
}
