package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Once Shutdown began, a Send still queued in a grain that stops is a dead
// letter, not forwarded: the member is leaving and activates nothing more.
// Here the grain is blocked with the Send behind it until the status is
// Leaving, then stops itself.
func TestClusterNoForwardWhileLeaving(t *testing.T) {
	k := newForwardKind()
	nd := startMember(t, newRegistry(t), k.kind())
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("counter", "leaving")
	_, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{})
	require.NoError(t, err)
	dead := deadAdds(t, nd)
	leaving := leavingSignal(t, nd)

	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	nd.c.Send(id, stop)
	<-stop.blocked
	nd.c.Send(id, &Add{N: 1})
	shut := make(chan error, 1)
	go func() { shut <- nd.c.Shutdown(ctx) }()
	awaitSignal(t, leaving, "Shutdown never began")
	close(stop.release)
	select {
	case e := <-dead:
		assert.Equal(t, &Add{N: 1}, e.Message)
	case r := <-k.adds:
		t.Fatalf("handled while leaving: %+v", r)
	case <-time.After(wait):
		t.Fatal("the Send was neither handled nor a dead letter")
	}
	require.NoError(t, <-shut)
	k.mu.Lock()
	defer k.mu.Unlock()
	assert.Equal(t, 1, k.starts[id.ID], "nothing activated again")
}

// Forwarded Sends whose resolutions are under way when the member shuts
// down end with it: Shutdown returns, and their goroutines are gone
// (goleak, TestMain). Every activation here stops as soon as it started,
// so each Send keeps being forwarded until its forwards run out.
func TestClusterShutdownEndsForwards(t *testing.T) {
	k := newForwardKind()
	k.stopStarted = true
	nd := startMember(t, newRegistry(t), k.kind())
	awaitMembers(t, 1, nd)
	for i := range 32 {
		nd.c.Send(cluster.NewIdentity("counter", fmt.Sprint("doomed-", i)), &Add{N: i})
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	require.NoError(t, nd.c.Shutdown(ctx))
	require.Equal(t, cluster.StatusStopped, nd.c.Status())
	select {
	case r := <-k.adds:
		t.Fatalf("a grain that stops when it starts handled %+v", r)
	default:
	}
}

// A Send that reaches a member for one of its grains while the member
// leaves (here: five sent by member a on the PID of b's grain, queued
// while b's Shutdown stops it) is relayed to the member that owns the
// identity once b is gone, instead of becoming a dead letter; there it is
// routed as a Send, and arrives, in order, on the identity's next
// activation. Before, all five were dead letters on b.
func TestClusterSendsToLeavingMemberRelayed(t *testing.T) {
	k, a, b := forwardPair(t)
	ctx := ctxWait(t)
	id := identitiesOn(t, ctx, a, b, 1, 64)[0]
	old := k.self(id)
	require.Equal(t, b.sys.Address(), old.Address)
	deadA, deadB := noDeadLetters(t, a), deadAdds(t, b)
	leaving := leavingSignal(t, b)

	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	a.sys.Root().Send(old, stop)
	<-stop.blocked
	shut := make(chan error, 1)
	go func() { shut <- b.c.Shutdown(ctx) }()
	awaitSignal(t, leaving, "Shutdown never began")
	for i := 1; i <= 5; i++ {
		a.sys.Root().Send(old, &Add{N: i})
	}
	close(stop.release)
	for i := 1; i <= 5; i++ {
		select {
		case e := <-deadB:
			t.Fatalf("dead letter on the leaving member: %+v", e.Message)
		case r := <-k.adds:
			// Usually on a; on b when a's activation request reached b's
			// placement actor before b's Shutdown did (the status changes
			// first), which b then stops with the rest.
			assert.Equal(t, i, r.n, "in the order sent")
			assert.Equal(t, "1", r.forwards)
		case e := <-deadA:
			t.Fatalf("dead letter %T %+v for %s", e.Message, e.Message, e.PID)
		case <-time.After(wait):
			t.Fatalf("Add %d never arrived", i)
		}
	}
	require.NoError(t, <-shut)
}

// leavingSignal signals when nd's status turns Leaving.
func leavingSignal(t *testing.T, nd node) chan struct{} {
	t.Helper()
	ch := make(chan struct{}, 1)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *cluster.ClusterStatusChanged) {
		if e.To == cluster.StatusLeaving {
			select {
			case ch <- struct{}{}:
			default:
			}
		}
	})
	t.Cleanup(func() { nd.sys.EventStream().Unsubscribe(sub) })
	return ch
}
