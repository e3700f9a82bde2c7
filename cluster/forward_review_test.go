package cluster_test

import (
	"fmt"
	"strings"
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

// The forward count travels with the message from member to member: two
// members whose PidCaches each lead to a dead grain PID on the other (stale
// entries, as after lost ActivationTerminated broadcasts) pass a Send back
// and forth three times, then it is a dead letter. Without the header kept
// on a dead letter from the wire (remote's targetNotFound), every hop would
// start the count afresh and the Send would circle for the PidCache TTL.
func TestClusterForwardsBoundedAcrossMembers(t *testing.T) {
	k, a, b := forwardPair(t)
	ctx := ctxWait(t)
	// The grain ID prefix of each member's placement actor.
	prefix := func(nd node) string {
		id := identitiesOn(t, ctx, nd, nd, 1, 64)[0]
		return strings.TrimSuffix(k.self(id).ID, id.String())
	}
	pa, pb := prefix(a), prefix(b)
	id := cluster.NewIdentity("counter", "ping-pong") // never activated
	goneOnA := actor.NewPID(a.sys.Address(), pa+id.String())
	goneOnB := actor.NewPID(b.sys.Address(), pb+id.String())
	a.c.PidCache().Put(id, goneOnB, b.c.Self().Key(), a.sys.Clock().Now())
	b.c.PidCache().Put(id, goneOnA, a.c.Self().Key(), b.sys.Clock().Now())
	deadA, deadB := deadAdds(t, a), deadAdds(t, b)

	a.sys.Root().Send(goneOnA, &Add{N: 9})
	// a forwards it (1) to b, b (2) to a, a (3) to b, where it stops.
	select {
	case e := <-deadB:
		assert.Equal(t, &Add{N: 9}, e.Message)
		assert.Equal(t, goneOnB.ID, e.PID.ID)
	case e := <-deadA:
		t.Fatalf("dead letter on a after %v: expected on b after three forwards", e.Message)
	case r := <-k.adds:
		t.Fatalf("a grain handled %+v", r)
	case <-time.After(wait):
		t.Fatal("the Send kept circling between the members")
	}
}

// What another node sends to made-up PIDs under a member's placement
// prefix: a name that is no identity, an identity of a kind the member
// does not host, or a forward count past the bound is a dead letter there;
// a made-up identity of a hosted kind is forwarded like a Send, and a
// negative or garbage count buys it no more forwards than none.
func TestClusterForwardOfMadeUpGrainPIDs(t *testing.T) {
	k, a, b := forwardPair(t)
	ctx := ctxWait(t)
	id0 := identitiesOn(t, ctx, a, a, 1, 64)[0]
	prefix := strings.TrimSuffix(k.self(id0).ID, id0.String())
	dead := make(chan *actor.DeadLetterEvent, 16)
	sub := actor.Subscribe(a.sys.EventStream(), func(e *actor.DeadLetterEvent) {
		if _, ok := e.Message.(*Add); ok {
			dead <- e
		}
	})
	defer a.sys.EventStream().Unsubscribe(sub)
	send := func(name, forwards string, n int) {
		var msg any = &Add{N: n}
		if forwards != "" {
			msg = &actor.MessageEnvelope{Header: actor.Header{cluster.ForwardHeader: forwards}, Message: msg}
		}
		b.sys.Root().Send(actor.NewPID(a.sys.Address(), prefix+name), msg)
	}
	for i, name := range []string{"counter", "counter/", "%zz/x", "nosuchkind/x", "counter/\xff"} {
		send(name, "", i)
		select {
		case e := <-dead:
			assert.Equal(t, prefix+name, e.PID.ID)
		case r := <-k.adds:
			t.Fatalf("%q: a grain handled %+v", name, r)
		case <-time.After(wait):
			t.Fatalf("%q: no dead letter", name)
		}
	}
	send("counter/made-up-1", "99999999999999999999", 10)
	select {
	case e := <-dead:
		assert.Equal(t, &Add{N: 10}, e.Message)
	case r := <-k.adds:
		t.Fatalf("a count past the bound was forwarded: %+v", r)
	case <-time.After(wait):
		t.Fatal("no dead letter")
	}
	for i, forwards := range []string{"", "-7", "garbage"} {
		send(fmt.Sprint("counter/made-up-", i+2), forwards, 20+i)
		select {
		case r := <-k.adds:
			assert.Equal(t, 20+i, r.n)
			assert.Equal(t, "1", r.forwards, "%q counts as none", forwards)
		case e := <-dead:
			t.Fatalf("%q: dead letter %+v", forwards, e.Message)
		case <-time.After(wait):
			t.Fatalf("%q: not forwarded", forwards)
		}
	}
}
