package cluster_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
)

// Unblocking a member makes it eligible again, which moves identities to it
// without a new view epoch. The member that unblocks it must hand over what
// it runs for those identities before the unblocked member may take them:
// here a took over every identity while b was blocked (b was evicted and
// rejoined as a new incarnation), and once a unblocks b, b's new incarnation
// owns about half of them. Before the fix a kept running them (unblock only
// rebuilt its ring) and acknowledged its view to b all the same, so b
// activated them too: two activations of one identity at once, b's with a
// smaller fencing token than a's (the same epoch, b's lower sequence).
func TestClusterUnblockHandsOverBeforeUnblockedMemberActivates(t *testing.T) {
	reg := fastRegistry(t)
	a := startMemberWith(t, reg, fastTiming, counterKind())
	b := startMemberWith(t, reg, fastTiming, counterKind())
	awaitMembers(t, 2, a, b)
	ctx := ctxWait(t)
	oldKey := b.c.Self().Key()
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
	onA, onSelf := rejoined(a), rejoined(b)
	remote.Get(a.sys).BlockList().Block(b.sys.Address())
	for _, ch := range []chan struct{}{onA, onSelf} {
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("the blocked member never rejoined")
		}
	}

	// Every identity activates on a: b's new incarnation is blocked there.
	obs := newObserver(a, b)
	ids := make([]cluster.Identity, 40)
	for i := range ids {
		ids[i] = cluster.NewIdentity("counter", fmt.Sprint(i))
		who, err := cluster.Request[*Identity](ctx, a.c, ids[i], &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, a.sys.Address(), who.Member, "b is blocked at a")
	}

	remote.Get(a.sys).BlockList().Unblock(b.sys.Address())
	onB := 0
	for _, id := range ids {
		who, err := cluster.Request[*Identity](ctx, b.c, id, &WhoAmI{})
		require.NoError(t, err)
		if who.Member == b.sys.Address() {
			onB++
		}
	}
	require.NotZero(t, onB, "some identities moved to the unblocked member")
	obs.assertNoOverlap(t)
	// And a routes them to b now: its own activations were handed over.
	for _, id := range ids {
		who, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{})
		require.NoError(t, err)
		whoB, err := cluster.Request[*Identity](ctx, b.c, id, &WhoAmI{})
		require.NoError(t, err)
		require.Equal(t, whoB.Member, who.Member, "%s answered from two members", id)
	}
	obs.assertNoOverlap(t)
	// The moved identities' new activations have greater fencing tokens
	// than a's, although the view's epoch is the same: storage that keeps
	// the greatest token accepts b's writes and refuses a's.
	obs.mu.Lock()
	defer obs.mu.Unlock()
	for id, ss := range obs.starts {
		for i := 1; i < len(ss); i++ {
			require.True(t, ss[i-1].token.Less(ss[i].token), "%s: token %s after %s", id, ss[i].token, ss[i-1].token)
		}
	}
}
