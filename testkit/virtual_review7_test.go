package testkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/testkit"
)

// AwaitConverged may run on a goroutine of its own (its doc asks nothing
// else; Eventually's asks for the test goroutine) while the test goroutine
// moves the clock with Eventually: both settle. Since 85d3065 settle counts
// its calls and time-outs in plain ints of the TestCluster (settles,
// settleTimeouts), a data race the race detector reports here; before,
// everything settle touched was atomic or locked.
func TestReview7ConcurrentSettleIsRaceFree(t *testing.T) {
	tc := testkit.NewCluster(t, testkit.Nodes(1), testkit.VirtualTime())
	ctx, cancel := context.WithTimeout(context.Background(), testkit.DefaultTimeout)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tc.AwaitConverged(ctx) }()
	start := tc.Now()
	tc.Eventually(func() bool { return tc.Now().Sub(start) >= 500*time.Millisecond }, 5*time.Second, "500 ms of virtual time pass")
	require.NoError(t, <-done)
}
