package actor

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

type (
	review12Block struct{ release chan struct{} }
	review12Get   struct{}
)

// review12BlockProps answers review12Get at once and review12Block once
// its channel is closed.
func review12BlockProps() *Props {
	return PropsFromFunc(func(c Context) {
		switch m := c.Message().(type) {
		case *review12Block:
			<-m.release
			c.Respond("released")
		case *review12Get:
			c.Respond(1)
		}
	})
}

// review12: Result of a future that is already complete must return at
// once. It does not when the target's turn is deferred with another
// caller's message: Future.Result (and Wait, ResultContext) call runTurn
// whatever the future's state, and runTurn runs the deferred turn of the
// future's target, which holds the other caller's message, on this
// goroutine (9bb168f made a caller turn handle "the caller's own message
// only" in sendAndRun and sendDeferred, but not in runTurn: the slot is
// per system, so any future to the same actor finds it). A message that
// blocks there holds this goroutine for good, whatever its timeout: the
// newuser9 hang again, through an older future instead of a new request.
// Suggested fix: runTurn only for a future whose request is the message
// the deferred turn holds (and not for a completed future), else wait on
// the future.
func TestReview12ResultOfACompletedFutureDoesNotRunAnotherRequest(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(review12BlockProps())
	waitPoolIdle(t, sys)

	old := sys.Root().RequestFuture(pid, &review12Get{}, time.Second)
	_, err := old.Result()
	require.NoError(t, err)
	waitPoolIdle(t, sys)

	// Another part of the program asks something that blocks, and has not
	// awaited it yet: the turn waits for its caller in the deferred slot.
	release := make(chan struct{})
	slow := sys.Root().RequestFuture(pid, &review12Block{release: release}, 0)
	defer func() {
		close(release)
		_, err := slow.Result()
		require.NoError(t, err)
	}()

	done := make(chan error, 1)
	go func() {
		_, err := old.Result() // complete: must not run anything
		done <- err
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-timer.C:
		t.Fatal("Result of a completed future had not returned after 5 s: it ran another request's blocking message on its goroutine")
	}
}

// review12: the same through ResultContext of a request still pending: its
// deadline must bound the wait. The actor keeps the first request's
// sender to answer it later (a subscription, a long poll); a second
// caller's RequestFuture with a blocking message is deferred; the first
// caller's ResultContext(50 ms) runs that message on its goroutine and
// cannot return at its deadline.
func TestReview12ResultContextOfAPendingFutureKeepsItsDeadline(t *testing.T) {
	sys := newCallerTurnSystem(t, 2)
	pid := sys.Root().Spawn(PropsFromFunc(func(c Context) {
		switch m := c.Message().(type) {
		case string: // "subscribe": answered later, never here
		case *review12Block:
			<-m.release
			c.Respond("released")
		}
	}))
	waitPoolIdle(t, sys)
	poll := sys.Root().RequestFuture(pid, "subscribe", 0)
	// The subscribe request's turn is deferred for its caller: Done hands
	// it to the pool.
	_ = poll.Done()
	waitPoolIdle(t, sys)

	release := make(chan struct{})
	slow := sys.Root().RequestFuture(pid, &review12Block{release: release}, 0)
	defer func() {
		close(release)
		_, err := slow.Result()
		require.NoError(t, err)
	}()

	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := poll.ResultContext(ctx)
		done <- err
	}()
	timer := time.NewTimer(5 * time.Second)
	defer timer.Stop()
	select {
	case err := <-done:
		require.True(t, errors.Is(err, ErrTimeout), "ResultContext = %v, want ErrTimeout", err)
	case <-timer.C:
		t.Fatal("ResultContext with a 50 ms deadline had not returned after 5 s: it ran another request's blocking message on its goroutine")
	}
}
