package cluster_test

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/cluster/internal/clusterpb"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// heldSend is a Send the grain's kind holds in its receive middleware until
// the test lets it on.
type heldSend struct{}

// A grain handles no message past its member's fence time (its lease is
// no longer guaranteed past the stop budget); a Send it would handle then
// is a dead letter that says why. The fence-time tick is a message to the
// placement actor, and the grain's urgent Stop then waits for the turn it
// is in: a message the grain takes between the fence time and its Stop is
// refused, and before, a Send (no sender to answer) was dropped with
// neither a dead letter nor a log. Here the kind's own receive middleware,
// which runs before the grain's check, holds a Send across the fence
// (manual clock: the member is cut off from the registry and fences 1.5 s
// after its last renewal), standing for a grain whose turn began late.
func TestClusterSendPastFenceIsDeadLetter(t *testing.T) {
	clock, reg := manualRegistry(t)
	entered, release := make(chan struct{}), make(chan struct{})
	hold := func(next actor.ReceiveFunc) actor.ReceiveFunc {
		return func(ctx actor.Context) {
			if _, ok := ctx.Message().(*heldSend); ok {
				close(entered)
				<-release
			}
			next(ctx)
		}
	}
	handledSends := make(chan any, 4)
	kind := cluster.NewKind("counter", actor.PropsFromProducer(func() actor.Actor {
		return actor.ReceiveFunc(func(c actor.Context) {
			switch c.Message().(type) {
			case *WhoAmI:
				c.Respond(&Identity{Member: c.Self().Address})
			case *heldSend:
				handledSends <- c.Message()
			}
		})
	}, actor.WithReceiveMiddleware(hold)))
	ccfg := cluster.Config{Name: "shop", Provider: reg, Kinds: []cluster.Kind{kind}}
	ccfg.TickInterval = time.Hour // only the tick at the fence time falls due
	rcfg := remote.DefaultConfig()
	rcfg.ListenAddress, rcfg.SystemName, rcfg.Serializers = "127.0.0.1:0", "shop", serializers(t)
	// The membership goroutine logs the stale view after it handled the
	// lost lease (the feed emits them in that order): by then it has asked
	// the placement actor for a tick.
	stale := make(chan struct{}, 16)
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = "shop"
		c.Clock = clock
		c.Logger = slog.New(signalHandler{msg: "cluster: membership view stale, keeping the last view", ch: stale})
		c.Extensions = []actor.ExtensionInstaller{remote.Install(rcfg), cluster.Install(ccfg)}
	})
	a := node{sys: sys, c: cluster.Get(sys)}
	awaitMembers(t, 1, a)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("counter", "x")
	_, err := cluster.Request[*Identity](ctx, a.c, id, &WhoAmI{}) // activated (a provider's first view grants at once)
	require.NoError(t, err)

	// One subscription, so in publishing order: the grain's dead letter
	// (its turn) comes before the placement actor's ActivationTerminated
	// (after the grain stopped).
	events := make(chan any, 64)
	sub := sys.EventStream().SubscribeWithPredicate(func(ev any) { events <- ev }, func(ev any) bool {
		switch e := ev.(type) {
		case *actor.DeadLetterEvent:
			_, ok := e.Message.(*heldSend)
			return ok
		case *cluster.ActivationTerminated:
			return e.Identity == id
		}
		return false
	})
	t.Cleanup(func() { sys.EventStream().Unsubscribe(sub) })
	fenced := first(t, sys, func(*cluster.Fenced) bool { return true })

	a.c.Send(id, &heldSend{}) // the grain's route: on the caller's goroutine
	awaitSignal(t, entered, "the grain never took the Send")
	key := a.c.Self().Key()
	reg.Partition(key)
	t.Cleanup(func() { reg.Heal(key) })
	// The renewal at 500 ms fails: the lease is lost, valid until 2 s, so
	// the fence time is at 1.5 s. The tick the lost lease asks for does
	// not fence; it arms the next one at the fence time. The clock stays
	// put until that tick is handled: a tick handled after the clock
	// passed the fence time would arm its successor in the past, which a
	// manual clock fires only at its next Advance.
	clock.Advance(cluster.DefaultMemoryConfig().RenewInterval)
	awaitSignal(t, stale, "the lost lease was never handled")
	placement := actor.NewPID(sys.Address(), "$placement")
	_, err = sys.Root().RequestFuture(placement, &clusterpb.ActivationRequest{Kind: "other", Id: "x"}, 0).ResultContext(ctx)
	require.NoError(t, err) // answered in order: the tick before it is handled
	clock.Advance(time.Second)
	require.Positive(t, fenced().Stopped, "the grain was not stopped")
	close(release)
	var dead *actor.DeadLetterEvent
	for ended := false; !ended; {
		select {
		case ev := <-events:
			switch e := ev.(type) {
			case *actor.DeadLetterEvent:
				dead = e
			case *cluster.ActivationTerminated:
				ended = true
			}
		case <-time.After(wait):
			t.Fatal("the grain never stopped")
		}
	}
	require.Empty(t, handledSends, "the grain handled the Send past its fence time")
	require.NotNil(t, dead, "the Send past the fence time left no dead letter")
	require.True(t, errors.Is(dead.Reason, cluster.ErrFenced), "reason %v", dead.Reason)
	require.Nil(t, dead.Sender)
}
