package testkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/testkit"
)

// TestReview11NilClusterFutureResultContext: the user-visible path of
// actor's TestReview11FailedFutureResultContextReturnsItsError. On a
// system without the cluster extension, cluster.Get returns nil, whose
// RequestFuture is an actor.FailedFuture(ErrNotInstalled); waiting on it
// with ResultContext and a deadline panicked (nil f.sys in the WakeIdle
// that 27ebdac added to ResultContext) instead of returning
// ErrNotInstalled. Fixed on 2026-11-25 (Future.wakeIdle checks for a
// system); the test failed before.
func TestReview11NilClusterFutureResultContext(t *testing.T) {
	sys := testkit.NewSystem(t)
	c := cluster.Get(sys)
	require.Nil(t, c)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var err error
	require.NotPanics(t, func() {
		_, err = c.RequestFuture(cluster.NewIdentity("counter", "a"), "hello", time.Second).ResultContext(ctx)
	})
	require.ErrorIs(t, err, cluster.ErrNotInstalled)
}
