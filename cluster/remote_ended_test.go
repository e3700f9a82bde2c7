package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// A member whose remote node ends while its cluster runs (Node.Close, which
// remote's godoc offers to tests that simulate a crash) is fenced for good:
// its grains stop, its membership ends as a crash ends it (no released
// marker: the others wait its lease out, then W) and it does not rejoin;
// its own requests fail at once with ErrShuttingDown. The others then serve
// its grains. Before, it went on renewing its lease with every grain it
// owned out of everyone's reach: the other member's requests to them
// failed (no connection) for as long as the process lived (newuser6's
// report: 6 of 10 requests failed 8 s later).
func TestClusterRemoteEndedEndsMembership(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	onA := identitiesOn(t, ctx, b, a, 3, 200)
	require.NotEmpty(t, onA)

	fenced := make(chan *cluster.Fenced, 1)
	actor.Subscribe(a.sys.EventStream(), func(ev *cluster.Fenced) {
		select {
		case fenced <- ev:
		default:
		}
	})
	gone := make(chan struct{}, 1)
	actor.Subscribe(b.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		if len(ev.Members) == 1 {
			select {
			case gone <- struct{}{}:
			default:
			}
		}
	})
	crash, cancel := context.WithCancel(context.Background())
	cancel()
	_ = remote.Get(a.sys).Node().Close(crash)

	select {
	case ev := <-fenced:
		require.ErrorIs(t, ev.Err, cluster.ErrShuttingDown)
		require.Equal(t, len(onA), ev.Stopped)
	case <-time.After(wait):
		t.Fatal("a was not fenced when its remote node ended")
	}
	_, err := cluster.Request[*Identity](ctx, a.c, onA[0], &WhoAmI{})
	require.ErrorIs(t, err, cluster.ErrShuttingDown, "a's own requests fail at once")

	// b sees a gone once a's lease runs out (600 ms here): before, a kept
	// renewing it.
	goneCtx, goneCancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer goneCancel()
	select {
	case <-gone:
	case <-goneCtx.Done():
		t.Fatal("a never left b's view: it went on renewing its lease")
	}
	for _, id := range onA {
		who, err := cluster.Request[*Identity](ctx, b.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, b.sys.Address(), who.Member)
	}
	require.Len(t, b.c.Members(), 1, "a did not rejoin")
	require.Equal(t, cluster.StatusFenced, a.c.Status())
}
