package cluster_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestClusterSendNilIsDropped: Send with a nil message drops it wherever
// the grain runs, as Request refuses it: a grain on another member never
// gets it (the serializers cannot encode it); before, one on the caller's
// member got a nil message, cold (behind the activation) or warm. The
// Requests after each Send arrive after it (one caller, one identity), so
// when they are answered, a nil the grain got has been reported.
func TestClusterSendNilIsDropped(t *testing.T) {
	gotNil := make(chan struct{}, 4)
	kind := cluster.NewKind("nilcheck", actor.PropsFromProducer(func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case nil:
				gotNil <- struct{}{}
			case *Get:
				c.Respond(&Total{})
			}
		})
	}))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.Kinds(kind))
	id := cluster.NewIdentity("nilcheck", "a")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, state := range []string{"cold", "warm"} {
		tc.Node(0).Send(id, nil)
		if _, err := cluster.Request[*Total](ctx, tc.Node(0), id, &Get{}); err != nil {
			t.Fatalf("%s: Request: %v", state, err)
		}
		select {
		case <-gotNil:
			t.Fatalf("%s: the grain got the nil message", state)
		default:
		}
	}
}

// A Send that is not sent at all (an invalid identity, a member that is
// leaving) is logged at Debug, as the other Sends that cannot be delivered
// are; before, both were dropped without a trace.
func TestClusterSendNotSentIsLogged(t *testing.T) {
	logged := make(chan struct{}, 4)
	reg := newRegistry(t)
	a := startMemberFull(t, reg, func(*cluster.Config) {}, func(c *actor.SystemConfig) {
		c.Logger = slog.New(signalHandler{msg: "cluster: send not sent", ch: logged})
	}, counterKind())
	awaitMembers(t, 1, a)
	a.c.Send(cluster.Identity{Kind: "counter"}, &Add{N: 1}) // no ID
	require.Len(t, logged, 1, "invalid identity")
	require.NoError(t, a.c.Shutdown(ctxWait(t)))
	a.c.Send(cluster.NewIdentity("counter", "x"), &Add{N: 1})
	require.Len(t, logged, 2, "leaving")
}
