package cluster_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// termBeforeGet is a custom IdentityLookup that, while the runtime holds
// the lookup for its Get, has the placement actor handle an
// ActivationTerminated broadcast first (another member's grain ended), as
// happens whenever a grain ends elsewhere while an activation is under way
// here.
type termBeforeGet struct {
	*cluster.PartitionIdentityLookup
	sys **actor.System // set once the system is built
}

func (l termBeforeGet) Get(id cluster.Identity, now time.Time) (*actor.PID, error) {
	sys := *l.sys
	sys.Root().Send(actor.NewPID(sys.Address(), "$placement"), &clusterpb.ActivationTerminated{
		Kind: "counter", Id: "elsewhere", MemberKey: "other#1", PidAddress: "10.0.0.9:4000", PidId: "x"})
	return l.PartitionIdentityLookup.Get(id, now)
}

// The placement actor never waits for a custom lookup: a Get in flight
// holds the lookup while it waits for an activation answer, possibly from
// this member's own placement actor. The placement actor dropping an
// identity's PID from the lookup (a termination broadcast, a handover, a
// passivation) waited for that Get, which waited for it: the activation
// stalled for ActivationTimeout and failed.
func TestClusterPlacementDoesNotWaitForCustomLookup(t *testing.T) {
	var sys *actor.System
	custom := func(c *cluster.Config) {
		c.ActivationTimeout = 20 * time.Second // a stall outlasts the deadline below
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			return termBeforeGet{PartitionIdentityLookup: p, sys: &sys}, err
		}
	}
	nd := startMemberWith(t, newRegistry(t), custom, counterKind())
	sys = nd.sys
	awaitMembers(t, 1, nd)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("counter", "1"), &Get{})
	require.NoError(t, err)
}
