package cluster_test

import (
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
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, reg, fastTiming, counterKind())
	c := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 3, a, b, c)
	ctx := ctxWait(t)
	onB := identitiesOn(t, ctx, a, b, 5, 300)
	require.NotEmpty(t, onB)
	oldKey := b.c.Self().Key()
	// b's new incarnation in the views of a and c.
	rejoined := func(nd node) chan struct{} {
		ch := make(chan struct{}, 1)
		actor.Subscribe(nd.sys.EventStream(), func(ev *cluster.TopologyChanged) {
			for _, m := range ev.Joined {
				if m.Address == b.sys.Address() && m.Key() != oldKey {
					select {
					case ch <- struct{}{}:
					default:
					}
				}
			}
		})
		return ch
	}
	// b's own view too: b adopts its new membership after registering it,
	// so a and c may see the new incarnation before b.c.Self() does; b
	// installs views of the new membership only once it adopted it.
	onA, onC, onSelf := rejoined(a), rejoined(c), rejoined(b)

	remote.Get(a.sys).BlockList().Block(b.sys.Address())

	for _, ch := range []chan struct{}{onA, onC, onSelf} {
		select {
		case <-ch:
		case <-time.After(wait):
			t.Fatal("the blocked member never rejoined")
		}
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
