package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
)

// brokenLookup is a user's IdentityLookup whose view, departure and
// removal callbacks panic after doing their work.
type brokenLookup struct {
	*cluster.PartitionIdentityLookup
}

func (l brokenLookup) UpdateTopology(t cluster.Topology) error {
	_ = l.PartitionIdentityLookup.UpdateTopology(t)
	panic("test: UpdateTopology bug")
}

func (l brokenLookup) OnMemberLeft(m cluster.Member) {
	l.PartitionIdentityLookup.OnMemberLeft(m)
	panic("test: OnMemberLeft bug")
}

func (l brokenLookup) RemovePID(id cluster.Identity) {
	l.PartitionIdentityLookup.RemovePID(id)
	panic("test: RemovePID bug")
}

// A panic in a custom lookup's other methods is contained too: it is
// logged, the lookup's lock is released, and the member keeps serving
// (the membership goroutine and the tracked goroutines that call them do
// not crash the process).
func TestClusterCustomLookupPanicsContained(t *testing.T) {
	custom := func(c *cluster.Config) {
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			return brokenLookup{p}, err
		}
	}
	reg := newRegistry(t)
	a := startMemberWith(t, reg, custom, counterKind())
	b := startMember(t, reg, counterKind())
	awaitMembers(t, 2, a, b) // views installed through UpdateTopology
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 20 {
		id := cluster.NewIdentity("counter", fmt.Sprint(i))
		_, err := cluster.Request[*Total](ctx, a.c, id, &Add{N: 1})
		require.NoError(t, err)
	}
	// Grains on a passivate: their drop calls RemovePID.
	for i := range 20 {
		id := cluster.NewIdentity("counter", fmt.Sprint(i))
		_, err := cluster.Request[*Total](ctx, a.c, id, &Sleep{})
		require.NoError(t, err)
	}
	// b leaves: OnMemberLeft.
	require.NoError(t, b.sys.Shutdown(ctx))
	awaitMembers(t, 1, a)
	for i := range 20 {
		_, err := cluster.Request[*Total](ctx, a.c, cluster.NewIdentity("counter", fmt.Sprint(i)), &Get{})
		require.NoError(t, err, "a serves every identity after b left")
	}
}
