package actor_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestFailedFuture: a future of no system, failed at once: every wait
// returns its error without blocking, and PipeTo delivers the error to a
// local actor through that actor's system.
func TestFailedFuture(t *testing.T) {
	boom := errors.New("boom")
	f := actor.FailedFuture(boom)
	select {
	case <-f.Done():
	default:
		t.Fatal("Done is not closed")
	}
	if _, err := f.Result(); err != boom {
		t.Fatalf("Result: %v", err)
	}
	if err := f.Wait(); err != boom {
		t.Fatalf("Wait: %v", err)
	}
	if _, err := f.ResultContext(context.Background()); err != boom {
		t.Fatalf("ResultContext: %v", err)
	}
	f.Complete("late", nil)
	if v, err := f.Result(); v != nil || err != boom {
		t.Fatalf("after Complete: %v, %v", v, err)
	}
	sys := testkit.NewManualSystem(t)
	p := testkit.NewManualProbe(t, sys)
	f.PipeTo(p.PID(), nil)
	if err := testkit.ExpectMsg[error](p, 0); err != boom {
		t.Fatalf("piped %v", err)
	}
}
