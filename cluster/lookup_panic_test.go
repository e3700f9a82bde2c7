package cluster_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// panickyLookup is a user's IdentityLookup whose Get panics for one ID.
type panickyLookup struct {
	*cluster.PartitionIdentityLookup
}

func (l panickyLookup) Get(id cluster.Identity, now time.Time) (*actor.PID, error) {
	if id.ID == "boom" {
		panic("test: lookup bug")
	}
	return l.PartitionIdentityLookup.Get(id, now)
}

// A custom IdentityLookup is user code: a panic in its Get fails the
// resolution with an error instead of crashing the process from the
// goroutine a RequestFuture (or a Send) resolves on, or leaving the
// identity's resolution under way for good, so that every later request
// for it waited out its deadline.
func TestClusterCustomLookupPanicIsAnError(t *testing.T) {
	custom := func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 2, Base: time.Millisecond, Max: time.Millisecond}
		c.IdentityLookup = func(activate cluster.Activator) (cluster.IdentityLookup, error) {
			p, err := cluster.NewPartitionIdentityLookup(cluster.DefaultLookupConfig(), cluster.WithActivator(activate))
			return panickyLookup{p}, err
		}
	}
	nd := startMemberWith(t, newRegistry(t), custom, counterKind())
	awaitMembers(t, 1, nd)
	boom := cluster.NewIdentity("counter", "boom")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for range 2 {
		_, err := nd.c.RequestFuture(boom, &Get{}, time.Minute).ResultContext(ctx)
		var af *cluster.ActivationFailedError
		if !errors.As(err, &af) || ctx.Err() != nil {
			t.Fatalf("err %v, want *ActivationFailedError before the deadline", err)
		}
	}
	_, err := cluster.Request[*Total](ctx, nd.c, cluster.NewIdentity("counter", "1"), &Get{})
	require.NoError(t, err, "the lookup still serves other identities")
}
