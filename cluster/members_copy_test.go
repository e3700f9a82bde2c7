package cluster_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// Members, Topology and TopologyChanged hand out copies: a caller that
// changes what it got (addresses, kinds) does not change the view that
// owner selection and routing use.
func TestClusterMembersAreCopies(t *testing.T) {
	reg := newRegistry(t)
	a, b := startMember(t, reg, counterKind()), startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b)
	spoil := func(ms []cluster.Member) {
		for i := range ms {
			ms[i].Address = "spoiled:1"
			if len(ms[i].Kinds) > 0 {
				ms[i].Kinds[0] = "spoiled"
			}
		}
	}
	sub := actor.Subscribe(a.sys.EventStream(), func(ev *cluster.TopologyChanged) {
		spoil(ev.Members)
		spoil(ev.Joined)
	})
	defer a.sys.EventStream().Unsubscribe(sub)
	spoil(a.c.Members())
	topo, ok := a.c.Topology()
	require.True(t, ok)
	spoil(topo.Members)

	c := startMember(t, reg, counterKind())
	awaitMembers(t, 3, a, b, c)
	for _, m := range a.c.Members() {
		require.NotEqual(t, "spoiled:1", m.Address)
		require.True(t, m.HasKind("counter"), "member %s", m.Key())
	}
	ctx := ctxWait(t)
	where := map[string]bool{}
	for i := range 30 {
		who, err := cluster.Request[*Identity](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &WhoAmI{})
		require.NoError(t, err)
		where[who.Member] = true
	}
	require.Len(t, where, 3, "identities on every member")
}
