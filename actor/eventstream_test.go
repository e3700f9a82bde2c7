package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// A subscriber's function that panics is contained: its subscription goes
// on with the next event, and the process lives. Before, the panic ended
// the process from the subscription's delivery goroutine.
func TestEventStreamSubscriberPanicContained(t *testing.T) {
	sys := testkit.NewSystem(t)
	got := make(chan string, 4)
	actor.Subscribe(sys.EventStream(), func(s string) {
		if s == "boom" {
			panic("subscriber bug")
		}
		got <- s
	})
	sys.EventStream().Publish("boom")
	sys.EventStream().Publish("after")
	select {
	case s := <-got:
		require.Equal(t, "after", s)
	case <-time.After(10 * time.Second):
		t.Fatal("the subscription stopped delivering after a panic")
	}
}

// A predicate that panics (it runs on the publisher's goroutine: a worker,
// the timer goroutine, a connection's reader) does not reach the
// publisher: the event is not delivered to that subscriber, and the others
// get it. Before, Publish panicked.
func TestEventStreamPredicatePanicContained(t *testing.T) {
	sys := testkit.NewSystem(t)
	bad := make(chan any, 4)
	sys.EventStream().SubscribeWithPredicate(func(ev any) { bad <- ev }, func(ev any) bool {
		if ev == "boom" {
			panic("predicate bug")
		}
		return true
	})
	good := make(chan any, 4)
	sys.EventStream().Subscribe(func(ev any) { good <- ev })
	require.NotPanics(t, func() { sys.EventStream().Publish("boom") })
	sys.EventStream().Publish("after")
	next := func(ch chan any) any {
		select {
		case ev := <-ch:
			return ev
		case <-time.After(10 * time.Second):
			t.Fatal("an event was not delivered")
			return nil
		}
	}
	require.Equal(t, "boom", next(good))
	require.Equal(t, "after", next(good))
	require.Equal(t, "after", next(bad), "the event whose predicate panicked is not delivered to its subscriber")
}

// Unsubscribe of a nil subscription does nothing; before, it panicked.
func TestEventStreamUnsubscribeNil(t *testing.T) {
	sys := testkit.NewSystem(t)
	require.NotPanics(t, func() { sys.EventStream().Unsubscribe(nil) })
}
