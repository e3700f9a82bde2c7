package cluster_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
)

// Passivate stops the grain as an idle timeout does (docs/cluster.md,
// "Passivation"): its local route is withdrawn, so a Send made after the
// placement actor handled the passivation waits for the next activation
// instead of reaching the stopping grain behind its PoisonPill, where it
// became a dead letter. The grain holds its Stopping handler until the
// Sends are made, so it is still stopping then; it runs on the blocking
// pool (WithBlocking) because that wait holds its worker: on the shared
// pool, with one worker (GOMAXPROCS=1), the placement actor never ran and
// the test timed out.
func TestClusterPassivateWithdrawsRoute(t *testing.T) {
	var adds atomic.Int32           // Adds received, by any activation
	stopping := make(chan struct{}) // the first activation stops once closed
	var once atomic.Bool
	kind := cluster.NewKind("recorder", actor.PropsFromProducer(func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *actor.Stopping:
				if once.CompareAndSwap(false, true) {
					<-stopping
				}
			case *Add:
				adds.Add(1)
			case *Sleep:
				cluster.Passivate(c)
				c.Respond(&Total{})
			case *Get:
				c.Respond(&Total{N: int(adds.Load())})
			}
		})
	}, actor.WithBlocking()))
	nd := startMember(t, newRegistry(t), kind)
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("recorder", "1")
	_, err := cluster.Request[*Total](ctx, nd.c, id, &Sleep{})
	require.NoError(t, err)
	// The grain asked for its passivation before it answered; the placement
	// actor answers in order, so once it answered this request it has
	// handled the passivation.
	_, err = nd.sys.Root().RequestFuture(actor.NewPID(nd.sys.Address(), "$placement"),
		&clusterpb.ActivationRequest{Kind: "other", Id: "x"}, 0).ResultContext(ctx)
	require.NoError(t, err)
	for range 5 {
		nd.c.Send(id, &Add{N: 1})
	}
	close(stopping)
	tot, err := cluster.Request[*Total](ctx, nd.c, id, &Get{})
	require.NoError(t, err)
	require.Equal(t, 5, tot.N, "Sends after the passivation reach the next activation")
}
