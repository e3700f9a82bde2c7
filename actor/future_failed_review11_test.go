package actor_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// TestReview11FailedFutureResultContextReturnsItsError shows a regression
// of 27ebdac: ResultContext on a FailedFuture, which belongs to no system,
// with a ctx that can end (a deadline, a cancel) panics with a nil
// pointer dereference in f.sys.coord.WakeIdle() (future.go, the line after
// awaitClose); FailedFuture's doc says ResultContext returns err at once,
// and so it did at 3755b72. The cluster's nil *Cluster hands such futures
// out (cluster.Get with no cluster installed: RequestFuture, CallFuture),
// so cluster.Get(sys).RequestFuture(id, msg, d).ResultContext(ctx) crashes
// the caller instead of returning ErrNotInstalled. Result and Wait are
// unaffected (waitDone returns on f.set before its WakeIdle).
//
// Fixed on 2026-11-25 (the test failed before). Suggested then: wake only when about to block, on a future that has a
// system: call WakeIdle after checking that f is still pending (f.sys is
// set for every pending future), for example inside awaitClose when it
// finds f not set, or guard it with f.sys != nil.
func TestReview11FailedFutureResultContextReturnsItsError(t *testing.T) {
	cause := errors.New("no system at hand")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	require.NotPanics(t, func() { _, err = actor.FailedFuture(cause).ResultContext(ctx) })
	require.ErrorIs(t, err, cause)
}
