package cluster_test

import (
	"context"
	"testing"
	"time"

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
