package cluster_test

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// rejoinGate passes the first Join; a later one (a rejoin) reports its
// member on entered and waits for release.
type rejoinGate struct {
	*cluster.MemoryRegistry
	joins   atomic.Int32
	entered chan cluster.Member
	release chan struct{}
}

func (g *rejoinGate) Join(ctx context.Context, self cluster.Member) (cluster.Membership, error) {
	if g.joins.Add(1) > 1 {
		select {
		case g.entered <- self:
		default:
		}
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.MemoryRegistry.Join(ctx, self)
}

// waitStack waits until pred holds for the stacks of all goroutines.
func waitStack(t *testing.T, what string, pred func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if pred(string(buf[:n])) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		runtime.Gosched()
	}
}

// A member whose remote node ends while a rejoin is between its
// remoteGone check (after Join) and its rejoinMsg must still be fenced for
// good. Here the placement actor handles remoteEndedMsg while the old
// incarnation is fenced already (so remoteEnded neither fences nor ends
// anything: fenceEnding is set), then the rejoinMsg installs the new
// incarnation, which nothing fences: it renews its lease for as long as the
// process lives with its remote node gone, the defect
// TestClusterRemoteEndedEndsMembership was written for.
func TestClusterRemoteEndedDuringRejoinStaysFenced(t *testing.T) {
	reg := fastRegistry(t)
	gate := &rejoinGate{MemoryRegistry: reg, entered: make(chan cluster.Member, 1), release: make(chan struct{})}
	a := startMemberWith(t, gate, fastTiming, counterKind())

	// An observer membership that sees the registry's views.
	obsCtx, obsCancel := context.WithTimeout(context.Background(), wait)
	defer obsCancel()
	obs, err := reg.Join(obsCtx, cluster.Member{ID: "observer", Incarnation: 1, Address: "127.0.0.1:1"})
	require.NoError(t, err)
	defer func() { _ = obs.Leave(context.Background()) }()

	fenced := make(chan *cluster.Fenced, 4)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.Fenced) {
		select {
		case fenced <- ev:
		default:
		}
	})
	require.NoError(t, reg.Evict(obsCtx, a.c.Self()))
	select {
	case <-fenced:
	case <-time.After(wait):
		t.Fatal("a was not fenced after its eviction")
	}
	var next cluster.Member
	select {
	case next = <-gate.entered:
	case <-time.After(wait):
		t.Fatal("a did not rejoin")
	}

	// The rejoin passes its remoteGone check and waits in adoptRejoined.
	unlock := cluster.HoldJoinMu(a.c)
	close(gate.release)
	waitStack(t, "the rejoin to wait in adoptRejoined", func(s string) bool {
		return strings.Contains(s, "(*Cluster).adoptRejoined")
	})
	has := func(topo cluster.Topology) bool {
		return slices.ContainsFunc(topo.Members, func(m cluster.Member) bool { return m.Key() == next.Key() })
	}
	require.True(t, has(reg.Topology()), "the rejoin's Join registered the new incarnation")

	// The remote node ends now; remoteEndedMsg is queued before rejoinMsg.
	crash, cancel := context.WithCancel(context.Background())
	cancel()
	_ = remote.Get(a.sys).Node().Close(crash)
	waitStack(t, "watchRemote to send remoteEndedMsg", func(s string) bool {
		return cluster.RemoteGone(a.c) && !strings.Contains(s, "(*Cluster).watchRemote")
	})
	unlock()

	// The new incarnation must end (its remote node is gone): the registry
	// drops it once its lease runs out (600 ms here).
	end := time.After(10 * time.Second)
	snaps := obs.Snapshots()
	for {
		select {
		case topo, ok := <-snaps:
			require.True(t, ok, "observer membership ended")
			if !has(topo) {
				return
			}
		case <-end:
			t.Fatalf("a's rejoined incarnation %s still in the registry 10 s after its remote node ended (status %v): it was never fenced",
				next.Key(), a.c.Status())
		}
	}
}
