package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// Review10: a Terminated that no grain's end produced makes the fenced
// incarnation's release run while its grain still runs. The placement
// actor takes any *actor.Terminated that reaches its Receive as the end of
// the grain whose PID ID it names (placementCore.terminated looks byPID up
// by ID alone, the address is not compared), including one sent as an
// ordinary message by code of the process (the placement actor is a
// system actor at a well-known name, "$placement"). Once its lease table
// reads empty the fenced incarnation is released (endFencedMembership):
// the released marker tells every other member "holds nothing", and they
// may activate the identity beside the grain that still runs here.
// (Without a fence, the same forged end drops a live grain from the lease
// table: a later view that moves its identity away neither stops it nor
// holds the view acknowledgement for it, so the new owner may activate it
// beside it; argued from moveAway/canAck, not tested here.)
//
// Failed before the fix (10 of 10): the marker was written while the
// grain's Receive was still running. A peer cannot forge one over the wire
// (remote takes a TerminatedNotice only for a watch held and about the
// sender's own node), so this takes a caller inside the process: low
// severity, but the only path found from outside the runtime to a release
// while a grain runs. Fixed in placementCore.terminated: a Terminated
// counts only when its Who is the activation's own PID pointer (the actor
// package reports a child's end with the PID its spawn returned).
// (dropCachedNoWait/acts.withdraw compare PID IDs alone as well: harmless
// there, a route withdrawn is published again.)
func TestClusterForgedTerminatedDoesNotReleaseFencedIncarnationReview10(t *testing.T) {
	reg := releaseRegistry(t)
	entered, unblock := make(chan struct{}, 1), make(chan struct{})
	stuck := cluster.NewKind("stuck", actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*Silent); ok {
			entered <- struct{}{}
			<-unblock
		}
	}))
	a := startMemberWith(t, reg, releaseTiming, stuck)
	var once sync.Once
	release := func() { once.Do(func() { close(unblock) }) }
	t.Cleanup(release)
	awaitMembers(t, 1, a)
	obsCtx, obsCancel := context.WithTimeout(context.Background(), wait)
	defer obsCancel()
	obs, err := reg.Join(obsCtx, cluster.Member{ID: "observer", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { _ = obs.Leave(context.Background()) }()
	awaitMembers(t, 2, a)

	id := cluster.NewIdentity("stuck", "1")
	started := make(chan *actor.PID, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ActivationStarted) {
		if ev.Identity == id {
			started <- ev.PID
		}
	})
	_ = a.c.RequestFuture(id, &Silent{}, time.Minute)
	var pid *actor.PID
	select {
	case pid = <-started:
	case <-time.After(wait):
		t.Fatal("the grain did not start")
	}
	receiveWithin(t, entered, "the grain did not receive its message")

	fa := watchFences(a)
	old := a.c.Self()
	require.NoError(t, reg.Evict(obsCtx, old))
	receiveWithin(t, fa.fenced, "a did not fence")
	require.Empty(t, obs.Released(), "released while a grain of the incarnation ran")

	// A Terminated that no end of the grain produced.
	a.sys.Root().Send(actor.NewPID(a.sys.Address(), "$placement"), &actor.Terminated{Who: actor.NewPID("elsewhere:1", pid.ID)})

	// Once the placement actor has handled it (an activation request sent
	// after it is answered after it), the grain must still hold its lease:
	// its Receive has not returned (unblock is still open).
	placement := actor.NewPID(a.sys.Address(), "$placement")
	_, err = a.sys.Root().RequestFuture(placement, &clusterpb.ActivationRequest{Kind: "stuck", Id: "2"}, wait).Result()
	require.NoError(t, err)
	if a.c.ActiveCount() == 0 {
		// The consequence: the fenced incarnation is released beside the
		// running grain (the registry is reachable: at once).
		awaitReleased(t, obs, []string{old.Key()}, wait)
		t.Fatal("the fenced incarnation was released while its grain's Receive still ran")
	}
	release()
	awaitReleased(t, obs, []string{old.Key()}, wait)
}
