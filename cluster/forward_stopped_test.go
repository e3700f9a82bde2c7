package cluster_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/cluster"
)

// A grain whose Stopped handler panics is still a grain that handled
// Stopped: its PID leads nowhere from then on, and the placement actor
// must answer busy for it (docs/cluster.md, Forwarding) until its
// Terminated arrives, as for one whose handler returned. Here the drain is
// held after Add 1 was forwarded, so its resolution reaches the placement
// actor before the Terminated does. With Retry.MaxAttempts 1, a busy answer
// ends that resolution (RetryThrottled); an answer with the dead PID hands
// Add 1 back to it, forward after forward, until it is a dead letter.
func TestClusterForwardNotToGrainWhoseStoppedPanicked(t *testing.T) {
	k := newForwardKind()
	k.panicStopped = true
	nd := startMemberWith(t, newRegistry(t), func(c *cluster.Config) {
		c.Retry = cluster.RetryPolicy{MaxAttempts: 1, Base: time.Millisecond, Max: time.Millisecond}
	}, k.kind())
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("counter", "panics-at-stop")
	_, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{})
	require.NoError(t, err)
	pid := k.self(id)
	dead := deadAdds(t, nd)
	throttled := make(chan struct{}, 1)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *cluster.RetryThrottled) {
		if e.Identity == id {
			select {
			case throttled <- struct{}{}:
			default:
			}
		}
	})
	defer nd.sys.EventStream().Unsubscribe(sub)
	_, release := holdDrainAt(t, nd)
	defer release()

	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	nd.c.Send(id, stop)
	<-stop.blocked
	nd.c.Send(id, &Add{N: 1})                            // forwarded from the drain
	nd.sys.Root().RequestFuture(pid, &holdDrain{}, wait) // then the drain is held
	close(stop.release)
	select {
	case <-throttled: // the resolution was answered busy
	case e := <-dead:
		t.Fatalf("the resolution returned the dead grain: %+v used up its forwards there and is a dead letter", e.Message)
	case <-time.After(wait):
		t.Fatal("no answer")
	}
}

// An activation request that waits for a grain's Started is answered when
// the grain reports ready, with its PID even when the grain has handled
// Stopped since (its Started handler stopped it): only a request that
// arrives after Stopped is answered busy. A Send waiting on that resolution
// is then delivered to the dead grain; the flight that delivered it, told
// by the forward that the PID is gone, resolves again instead of handing it
// back there, so it reaches the next activation forwarded once. Here the
// placement actor is held in the ActivationStarted publication until the
// grain's mailbox drained (after its Stopped), so that the waiters hear of
// the grain only once it is gone.
func TestClusterSendForwardedFromGrainThatStoppedInStarted(t *testing.T) {
	k := newForwardKind()
	k.stopFirstHeld = true
	nd := startMember(t, newRegistry(t), k.kind())
	awaitMembers(t, 1, nd)
	id := cluster.NewIdentity("counter", "stops-in-started")
	drained, release := make(chan struct{}), make(chan struct{})
	defer close(release)
	var once sync.Once
	sub := nd.sys.EventStream().SubscribeWithPredicate(func(any) {}, func(ev any) bool {
		switch e := ev.(type) {
		case *actor.DeadLetterEvent:
			if _, ok := e.Message.(*holdDrain); ok {
				once.Do(func() { close(drained) })
			}
		case *cluster.ActivationStarted:
			if e.Identity == id {
				select { // the first activation: hold the placement actor
				case <-drained:
				case <-release:
				}
			}
		}
		return false
	})
	defer nd.sys.EventStream().Unsubscribe(sub)
	dead := deadAdds(t, nd)

	nd.c.Send(id, &Add{N: 1})
	select {
	case r := <-k.adds:
		assert.Equal(t, received{n: 1, activation: 2, forwards: "1", member: nd.sys.Address()}, r,
			"forwarded once, from the dead grain to the next activation")
	case e := <-dead:
		t.Fatalf("dead letter %+v", e.Message)
	case <-time.After(wait):
		t.Fatal("no Add arrived")
	}
}
