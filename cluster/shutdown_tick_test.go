package cluster_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Found by the chaos test (testkit, seed 1): after Cluster.Shutdown the
// placement actor's ticks went on as if it served, found the released lease
// invalid, fenced the stopped member (status Stopped → Fenced) and started a
// goroutine on the cluster's WaitGroup while Shutdown waited on it (a race,
// and "WaitGroup is reused" panics). A stopped cluster stays stopped.
func TestClusterStaysStoppedAfterShutdown(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 1, a)
	changed := make(chan cluster.Status, 16)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.ClusterStatusChanged) { changed <- ev.To })
	require.NoError(t, a.c.Shutdown(ctxWait(t)))
	require.Equal(t, cluster.StatusStopped, a.c.Status())
	// The lease was released at Shutdown; 25 ticks (500 ms) go by.
	deadline := time.After(25 * 20 * time.Millisecond)
	for {
		select {
		case s := <-changed:
			require.Contains(t, []cluster.Status{cluster.StatusLeaving, cluster.StatusStopped}, s, "status after Shutdown")
		case <-deadline:
			require.Equal(t, cluster.StatusStopped, a.c.Status())
			return
		}
	}
}
