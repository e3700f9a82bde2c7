package actor_test

// Found porting a Hollywood program (examples/hollywood, docs/coming-from-hollywood.md).

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

type (
	newuser9Block struct{ release chan struct{} }
	newuser9Get   struct{}
)

// DEFECT (fixed on 2026-11-25; the test failed before). Hollywood's engine.Request(pid, msg, timeout).Result() returns
// after the timeout whatever the actor does; a port writes
// sys.Root().RequestFuture(pid, msg, 50ms).Result(), whose godoc says the
// future fails with ErrTimeout after the timeout.
//
// Expected: Result returns ErrTimeout about 50 ms after the request, while
// the actor is blocked in a message that another request queued before
// (here one whose future nobody has awaited yet, as a program that starts
// two requests and then waits for them does).
//
// What happened: when the pool is idle, the first request's turn is deferred
// (up to 100 µs) for its own caller's Result; the second request's Result
// runs the actor's turn on its calling goroutine instead, and that turn
// begins with the FIRST request's message, which blocks until the caller
// (the goroutine now stuck inside Result) releases it: Result never returns,
// the 50 ms timeout notwithstanding (the program of examples/hollywood hung
// for good on its first try). docs/actors.md says a turn running on the
// caller cannot be interrupted by the deadline; it does not say that the
// turn may be another caller's message, so the bound of one's own request
// depends on what others queued, and a deadlock results.
//
// Suggested fix: run a caller turn (and claim a deferred turn) from a
// future's Result only when the request's own message is the first one the
// turn would handle (the mailbox held nothing else: the idle → scheduled
// claim of this very post); otherwise hand the deferred turn to the pool
// and wait on the future, which honours its timeout.
func TestNewuser9ResultTimeoutNotHeldByAnotherRequestsMessage(t *testing.T) {
	for i := 0; i < 20; i++ {
		if msg := newuser9Round(t); msg != "" {
			t.Fatalf("round %d: %s", i, msg)
		}
	}
}

// newuser9Round runs the scenario once on a system of its own, which it
// shuts down whatever happened, and says what went wrong ("" for nothing).
func newuser9Round(t *testing.T) string {
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "newuser9"})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	done := make(chan error, 1)
	var slow *actor.Future
	defer func() {
		close(release) // unblock the turn, so the system can shut down
		if slow != nil {
			<-done
			if _, err := slow.Result(); err != nil {
				t.Error(err)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := sys.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	}()
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case *newuser9Block:
			<-m.release
			c.Respond("released")
		case *newuser9Get:
			c.Respond(1)
		}
	}))
	// Let the actor start, so the pool is idle again.
	if _, err := sys.Root().RequestFuture(pid, &newuser9Get{}, time.Second).Result(); err != nil {
		return err.Error()
	}
	slow = sys.Root().RequestFuture(pid, &newuser9Block{release: release}, 0)
	go func() {
		_, err := sys.Root().RequestFuture(pid, &newuser9Get{}, 50*time.Millisecond).Result()
		done <- err
	}()
	select {
	case err := <-done:
		done <- err // for the deferred wait
		if !errors.Is(err, actor.ErrTimeout) {
			return fmt.Sprintf("Result = %v, want ErrTimeout", err)
		}
		return ""
	case <-time.After(5 * time.Second):
		return "Result of a request with a 50 ms timeout had not returned after 5 s: it ran another request's blocking message on its own goroutine"
	}
}
