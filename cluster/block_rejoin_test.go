package cluster_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// A blocked member that is evicted fences and rejoins as a new incarnation
// (docs/cluster.md, "Blocked"), at the same address remote's block list
// still refuses. The new incarnation must stay out of owner selection on
// the members that block it: otherwise every identity it owns is routed to
// an address remote refuses, and requests for them fail until they time out.
func TestClusterBlockedMemberRejoinedStaysOutOfOwnerSelection(t *testing.T) {
	_, a, b, c := fastTrio(t)
	// It failed once in 20 runs of the package under load (load average
	// 9.5): a request met "activation busy" for all its 10 attempts. A
	// member that rejoined (fenced) while the blocked member's new
	// incarnation was in the view waited for that incarnation for ever
	// (now it evicts it: TestClusterMemberRejoiningBesideBlockedMemberActivates);
	// whether that happened then is not known, so a failure logs what
	// each member went through.
	logMemberEventsOnFailure(t, map[string]node{"a": a, "b": b, "c": c})
	ctx := ctxWait(t)
	onB := identitiesOn(t, ctx, a, b, 5, 300)
	require.NotEmpty(t, onB)
	oldKey := b.c.Self().Key()
	// b's new incarnation in the views of a and c, and in b's own view
	// too: b adopts its new membership after registering it, so a and c
	// may see the new incarnation before b.c.Self() does; b installs
	// views of the new membership only once it adopted it.
	onA, onC, onSelf := joinedAgain(t, a, b, oldKey), joinedAgain(t, c, b, oldKey), joinedAgain(t, b, b, oldKey)

	remote.Get(a.sys).BlockList().Block(b.sys.Address())

	for _, ch := range []chan struct{}{onA, onC, onSelf} {
		awaitSignal(t, ch, "the blocked member never rejoined")
	}
	require.NotEqual(t, oldKey, b.c.Self().Key())
	for _, id := range onB {
		for _, from := range []node{a, c} {
			who, err := cluster.Request[*Identity](ctx, from.c, id, &WhoAmI{})
			require.NoError(t, err, "request for %s from %s", id, from.sys.Address())
			require.NotEqual(t, b.sys.Address(), who.Member)
		}
	}
}

// logMemberEventsOnFailure records, from now on, the membership events of
// each node (views, status changes, lease losses, fences, blocks applied,
// retries exhausted) and logs them when the test fails.
func logMemberEventsOnFailure(t *testing.T, nodes map[string]node) {
	t.Helper()
	var (
		mu    sync.Mutex
		lines []string
	)
	start := time.Now()
	for name, nd := range nodes {
		es := nd.sys.EventStream()
		sub := es.SubscribeWithPredicate(func(ev any) {
			var what string
			switch e := ev.(type) {
			case *cluster.TopologyChanged:
				what = fmt.Sprintf("view epoch %d: %d members, joined %v, left %v", e.Epoch, len(e.Members), memberKeys(e.Joined), memberKeys(e.Left))
			case *cluster.ClusterStatusChanged:
				what = fmt.Sprintf("status %v -> %v (%s)", e.From, e.To, e.Member)
			case *cluster.LeaseLost:
				what = fmt.Sprintf("lease lost (%s): %v", e.Member, e.Err)
			case *cluster.Fenced:
				what = fmt.Sprintf("fenced (%s), %d grains stopped: %v", e.Member, e.Stopped, e.Err)
			case *cluster.BlockListApplied:
				what = fmt.Sprintf("block applied to %s: %d revoked, %d invalidated", e.Member, e.Revoked, e.Invalidated)
			case *cluster.RetryThrottled:
				what = fmt.Sprintf("retries exhausted for %s after %d attempts: %v", e.Identity, e.Attempts, e.Err)
			}
			mu.Lock()
			lines = append(lines, fmt.Sprintf("%8v %s (%s): %s", time.Since(start).Round(time.Millisecond), name, nd.sys.Address(), what))
			mu.Unlock()
		}, func(ev any) bool {
			switch ev.(type) {
			case *cluster.TopologyChanged, *cluster.ClusterStatusChanged, *cluster.LeaseLost, *cluster.Fenced,
				*cluster.BlockListApplied, *cluster.RetryThrottled:
				return true
			}
			return false
		})
		t.Cleanup(func() { es.Unsubscribe(sub) })
	}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		t.Logf("member events (delivered per member in order; members interleaved by delivery time):\n%s", strings.Join(lines, "\n"))
	})
}

func memberKeys(ms []cluster.Member) []string {
	keys := make([]string, len(ms))
	for i, m := range ms {
		keys[i] = m.Key()
	}
	return keys
}

// A member that rejoins while a blocked member's new incarnation stays
// registered (here a fenced after an eviction, beside b's incarnation that
// a and c block) counts that incarnation among the possible earlier owners
// of its first view, and cannot hear it. It evicts it: the blocked member
// fences and leaves the view, and the rejoined member activates its
// identities W later. Before, it waited for that member for ever, and
// every request for its identities ended ErrTimeout after "activation
// busy" on every attempt.
func TestClusterMemberRejoiningBesideBlockedMemberActivates(t *testing.T) {
	reg, a, b, c := fastTrio(t)
	logMemberEventsOnFailure(t, map[string]node{"a": a, "b": b, "c": c})
	ctx := ctxWait(t)
	bOnC := joinedAgain(t, c, b, b.c.Self().Key())
	remote.Get(a.sys).BlockList().Block(b.sys.Address())
	awaitSignal(t, bOnC, "b never rejoined")

	oldA := a.c.Self()
	aOnC := joinedAgain(t, c, a, oldA.Key())
	require.NoError(t, reg.Evict(ctx, oldA))
	awaitSignal(t, aOnC, "a never rejoined")
	onA := identitiesOn(t, ctx, c, a, 3, 300)
	require.Len(t, onA, 3)
	for _, id := range onA {
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err, "request for %s on a", id)
		require.Equal(t, a.sys.Address(), who.Member)
	}
}

// joinedAgain signals when nd's view gets an incarnation of who other than
// oldKey.
func joinedAgain(t *testing.T, nd, who node, oldKey string) chan struct{} {
	t.Helper()
	ch := make(chan struct{}, 1)
	sub := actor.Subscribe(nd.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		for _, m := range ev.Joined {
			if m.Address == who.sys.Address() && m.Key() != oldKey {
				select {
				case ch <- struct{}{}:
				default:
				}
			}
		}
	})
	t.Cleanup(func() { nd.sys.EventStream().Unsubscribe(sub) })
	return ch
}

// awaitSignal waits for ch, failing the test with what when it does not
// come.
func awaitSignal(t *testing.T, ch chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(wait):
		t.Fatal(what)
	}
}

// fastTrio starts three members with fast lease timing on one registry,
// each hosting counterKind.
func fastTrio(t *testing.T) (*cluster.MemoryRegistry, node, node, node) {
	t.Helper()
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, reg, fastTiming, counterKind())
	c := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 3, a, b, c)
	return reg, a, b, c
}
