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

// holdDrain is requested of a grain that is about to stop, so that it
// stays in the mailbox and becomes a dead letter (a message with a sender
// is not forwarded) while the mailbox drains.
type holdDrain struct{}

// holdDrainAt stops the goroutine that publishes holdDrain's dead letter
// (the stopping grain's worker, draining its mailbox) until the returned
// release is called; held is closed once it is stopped there. It uses the
// EventStream's predicate, which runs on the publisher's goroutine.
func holdDrainAt(t *testing.T, nd node) (held chan struct{}, release func()) {
	t.Helper()
	held, rel := make(chan struct{}), make(chan struct{})
	var once, heldOnce sync.Once
	release = func() { once.Do(func() { close(rel) }) }
	sub := nd.sys.EventStream().SubscribeWithPredicate(func(any) {}, func(ev any) bool {
		if e, ok := ev.(*actor.DeadLetterEvent); ok {
			if _, ok := e.Message.(*holdDrain); ok {
				heldOnce.Do(func() { close(held) })
				<-rel
			}
		}
		return false
	})
	t.Cleanup(func() {
		release()
		nd.sys.EventStream().Unsubscribe(sub)
	})
	return held, release
}

// deadAdds reports the Adds that become dead letters on nd.
func deadAdds(t *testing.T, nd node) chan *actor.DeadLetterEvent {
	t.Helper()
	dead := make(chan *actor.DeadLetterEvent, 16)
	sub := actor.Subscribe(nd.sys.EventStream(), func(e *actor.DeadLetterEvent) {
		if _, ok := e.Message.(*Add); ok {
			select {
			case dead <- e:
			default:
			}
		}
	})
	t.Cleanup(func() { nd.sys.EventStream().Unsubscribe(sub) })
	return dead
}

// Forwarded Sends of one sender are not kept in order among themselves: a
// Send queued in a stopping grain's mailbox is forwarded by the worker that
// drains it, one that reaches the closed mailbox meanwhile by the sender's
// own goroutine, and the second can join the next resolution first. Here
// Add 1 is queued, the drain is held before it, and Add 2 (sent later)
// overtakes it although it did not find the next activation directly: it
// was forwarded as well. docs/cluster.md's Order paragraph says so.
func TestClusterForwardedSendOvertakenByLaterForwarded(t *testing.T) {
	k := newForwardKind()
	nd := startMember(t, newRegistry(t), k.kind())
	awaitMembers(t, 1, nd)
	ctx := ctxWait(t)
	id := cluster.NewIdentity("counter", "order")
	_, err := cluster.Request[*Identity](ctx, nd.c, id, &WhoAmI{}) // routable from here on
	require.NoError(t, err)
	pid := k.self(id)
	dead := deadAdds(t, nd)
	held, release := holdDrainAt(t, nd)

	stop := &stopNow{blocked: make(chan struct{}), release: make(chan struct{})}
	nd.c.Send(id, stop)
	<-stop.blocked
	nd.sys.Root().RequestFuture(pid, &holdDrain{}, wait) // queued first
	nd.c.Send(id, &Add{N: 1})                            // queued behind it
	close(stop.release)
	<-held                    // the grain stopped; its worker drains the mailbox, held before Add 1
	nd.c.Send(id, &Add{N: 2}) // the route still leads to the closed mailbox: forwarded here
	release()

	var got []received
	for range 2 {
		select {
		case r := <-k.adds:
			got = append(got, r)
		case e := <-dead:
			t.Fatalf("dead letter %+v", e.Message)
		case <-time.After(wait):
			t.Fatalf("only %d of 2 Adds arrived", len(got))
		}
	}
	want := []received{
		{n: 2, activation: 2, forwards: "1", member: nd.sys.Address()},
		{n: 1, activation: 2, forwards: "1", member: nd.sys.Address()},
	}
	assert.Equal(t, want, got, "Add 2, forwarded first, arrives first")
}
