package main

// Remote and cluster behaviour a Hollywood user carries over, on real
// loopback TCP. docs/coming-from-hollywood.md cites these tests by name.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// twoNodes starts two systems with remote (the program's remoteNode) and
// shuts them down at cleanup.
func twoNodes(t *testing.T) (a, b *actor.System) {
	t.Helper()
	a, err := remoteNode("a")
	require.NoError(t, err)
	b, err = remoteNode("b")
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		require.NoError(t, a.Shutdown(ctx))
		require.NoError(t, b.Shutdown(ctx))
	})
	return a, b
}

// Across nodes: a Send of a type nobody registered is a dead letter on the
// sender, with remote.ErrUnknownType as its reason (Hollywood: the message
// must be a proto.Message, and any registered proto is decodable); a
// request to a name with no actor on the other node fails with
// ErrDeadLetter well before its deadline; messages from one sender arrive
// in order.
func TestHollywoodRemoteDeliveryRules(t *testing.T) {
	a, b := twoNodes(t)
	got := make(chan int, 1000)
	_, err := b.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if m, ok := c.Message().(*Ping); ok {
			got <- m.N
		}
	}), "sink")
	require.NoError(t, err)
	sink := actor.NewPID(b.Address(), "sink")

	dead := make(chan *actor.DeadLetterEvent, 1)
	sub := actor.Subscribe(a.EventStream(), func(e *actor.DeadLetterEvent) {
		if _, ok := e.Message.(*NotRegistered); ok {
			dead <- e
		}
	})
	defer a.EventStream().Unsubscribe(sub)
	a.Root().Send(sink, &NotRegistered{})
	select {
	case e := <-dead:
		require.ErrorIs(t, e.Reason, remote.ErrUnknownType)
	case <-time.After(10 * time.Second):
		t.Fatal("no dead letter for an unregistered type")
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = actor.Request[*Pong](ctx, a.Root(), actor.NewPID(b.Address(), "nobody"), &Ping{N: 1})
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	require.Less(t, time.Since(start), 30*time.Second, "failed before the deadline")

	for i := 0; i < 1000; i++ {
		a.Root().Send(sink, &Ping{N: i})
	}
	for i := 0; i < 1000; i++ {
		select {
		case n := <-got:
			require.Equal(t, i, n)
		case <-time.After(10 * time.Second):
			t.Fatalf("message %d did not arrive", i)
		}
	}
}

// Hollywood's cluster.Activate places a new actor and returns its PID
// (nil when the ID is taken or no member has the kind). fraktor-go has no
// Activate: the first message to an Identity activates the grain on its
// owner, every member reaches the same activation, and an unknown kind is
// an error (ErrNoSuchKind) at once, not a nil PID.
func TestHollywoodClusterNoActivate(t *testing.T) {
	var started = make(chan string, 8)
	kind := cluster.NewKind("player", actor.PropsFromProducer(func() actor.Actor {
		points := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			switch m := c.Message().(type) {
			case *actor.Started:
				id, _ := cluster.IdentityOf(c)
				started <- id.ID
			case *Score:
				points += m.Points
				c.Respond(&Total{Points: points, Member: c.Self().Address})
			}
		})
	}))
	tc := testkit.NewCluster(t, testkit.Nodes(2), testkit.TCP(), testkit.Kinds(kind),
		testkit.Serializers(func(s *remote.Serializers) error {
			return errors.Join(remote.RegisterJSON[*Score](s, "hollywood.Score"), remote.RegisterJSON[*Total](s, "hollywood.Total"))
		}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, tc.AwaitConverged(ctx))
	require.Equal(t, 0, tc.Node(0).ActiveCount()+tc.Node(1).ActiveCount(), "nothing activated before a message")

	bob := cluster.NewIdentity("player", "bob")
	t0, err := cluster.Request[*Total](ctx, tc.Node(0), bob, &Score{Points: 1})
	require.NoError(t, err)
	t1, err := cluster.Request[*Total](ctx, tc.Node(1), bob, &Score{Points: 1})
	require.NoError(t, err)
	require.Equal(t, t0.Member, t1.Member)
	require.Equal(t, 2, t1.Points)
	require.Equal(t, "bob", <-started)
	require.Equal(t, 1, tc.Node(0).ActiveCount()+tc.Node(1).ActiveCount())

	_, err = cluster.Request[*Total](ctx, tc.Node(0), cluster.NewIdentity("monster", "x"), &Score{Points: 1})
	require.ErrorIs(t, err, cluster.ErrNoSuchKind)
}

// A Hollywood actor activated in the cluster lives until someone stops it.
// A grain is passivated when idle (Config.IdleTimeout, 1 h by default, or
// the kind's WithIdleTimeout): its state in memory is gone, and the next
// message activates a fresh instance.
func TestHollywoodClusterIdleGrainIsPassivated(t *testing.T) {
	kind := cluster.NewKind("player", actor.PropsFromProducer(func() actor.Actor {
		points := 0
		return actor.ReceiveFunc(func(c actor.Context) {
			if m, ok := c.Message().(*Score); ok {
				points += m.Points
				c.Respond(&Total{Points: points, Member: c.Self().Address})
			}
		})
	}), cluster.WithIdleTimeout(200*time.Millisecond))
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.TCP(), testkit.Kinds(kind),
		testkit.Serializers(func(s *remote.Serializers) error {
			return errors.Join(remote.RegisterJSON[*Score](s, "hollywood.Score"), remote.RegisterJSON[*Total](s, "hollywood.Total"))
		}))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	require.NoError(t, tc.AwaitConverged(ctx))
	ended := make(chan cluster.Identity, 1)
	sub := actor.Subscribe(tc.Node(0).System().EventStream(), func(e *cluster.ActivationTerminated) { ended <- e.Identity })
	defer tc.Node(0).System().EventStream().Unsubscribe(sub)

	bob := cluster.NewIdentity("player", "bob")
	for want := 1; want <= 2; want++ {
		total, err := cluster.Request[*Total](ctx, tc.Node(0), bob, &Score{Points: 1})
		require.NoError(t, err)
		require.Equal(t, want, total.Points)
	}
	select {
	case id := <-ended: // passivated after 200 ms without a message
		require.Equal(t, bob, id)
	case <-ctx.Done():
		t.Fatal("the idle grain was not passivated")
	}
	total, err := cluster.Request[*Total](ctx, tc.Node(0), bob, &Score{Points: 1})
	require.NoError(t, err)
	require.Equal(t, 1, total.Points, "a fresh activation")
}
