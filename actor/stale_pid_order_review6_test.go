package actor_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// TestReview6StalePIDKeepsOneSendersOrderAcrossTheDrain: cell.rebind's
// godoc says one sender's messages through a held PID keep their order.
// They do not when a new actor takes the name while the stopped actor's
// mailbox is being drained (cell.finalize removes the cell from the
// registry before mb.Close drains it): what the drain moves (queued at
// the stop) reaches the new actor after what the same sender sent later,
// which found the closed mailbox and went over on the sender's goroutine.
//
// The drain is held at its first message by a dead-letter predicate (it
// runs on the publisher's goroutine, the worker draining); the name is
// free then, the new actor is spawned, and the sender's next message goes
// through the held PID. Sequence expected at the new actor: increasing.
// Seen: [6 2 3 4 5].
func TestReview6StalePIDKeepsOneSendersOrderAcrossTheDrain(t *testing.T) {
	sys, err := actor.NewSystem(actor.SystemConfig{Workers: 2})
	require.NoError(t, err)
	t.Cleanup(func() { _ = sys.Shutdown(t.Context()) })
	root := sys.Root()

	hold, inside := make(chan struct{}), make(chan struct{})
	old, err := root.SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if c.Message() == "block" {
			close(inside)
			<-hold
		}
	}), "ordered")
	require.NoError(t, err)

	drainHeld, resume := make(chan struct{}), make(chan struct{})
	sub := sys.EventStream().SubscribeWithPredicate(func(any) {}, func(ev any) bool {
		if d, ok := ev.(*actor.DeadLetterEvent); ok && d.Message == 1 {
			close(drainHeld)
			<-resume
		}
		return false
	})
	defer sys.EventStream().Unsubscribe(sub)
	resumed := false
	release := func() {
		if !resumed {
			resumed = true
			close(resume)
		}
	}
	defer release()

	root.Send(old, "block")
	<-inside
	for i := 1; i <= 5; i++ { // queued behind "block"
		root.Send(old, i)
	}
	stopped := root.StopFuture(old) // runs once "block" returns
	close(hold)
	select {
	case <-drainHeld:
	case <-time.After(10 * time.Second):
		t.Fatal("the stopped actor's queue was never drained")
	}

	seen := make(chan int, 16)
	counter := actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case int:
			seen <- m
		case string:
			seen <- -1
		}
	})
	_, err = root.SpawnNamed(counter, "ordered")
	if errors.Is(err, actor.ErrNameExists) {
		// The name is still the stopped actor's while its queue drains
		// (the fix): let the drain end, then take the name.
		release()
		require.NoError(t, stopped.Wait())
		_, err = root.SpawnNamed(counter, "ordered")
	}
	require.NoError(t, err)
	root.Send(old, 6) // the same sender, later, through the held PID
	release()
	require.NoError(t, stopped.Wait())

	// Everything the drain moved was posted before the stop completed: a
	// marker sent now comes after it.
	root.Send(old, "end")
	var got []int
	for done := false; !done; {
		select {
		case m := <-seen:
			if m < 0 {
				done = true
			} else {
				got = append(got, m)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the marker never came; got %v", got)
		}
	}
	require.Contains(t, got, 6)
	for i := 1; i < len(got); i++ {
		require.Less(t, got[i-1], got[i], "one sender's messages through a held PID out of order at the new actor: %v", got)
	}
}
