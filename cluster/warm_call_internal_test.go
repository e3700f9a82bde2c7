package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
)

// wallAt reuses the reading of c.now() as the wall clock's when the
// system's clock is the wall clock (one clock read less per warm call), and
// reads the wall clock under another clock: a warm call's deadline is a
// wall-clock time (its retries' context's), whatever drives the system's
// timers.
func TestWarmCallWallAt(t *testing.T) {
	for _, manual := range []bool{false, true} {
		cfg := actor.SystemConfig{}
		if manual {
			cfg.Clock = scheduler.NewManualClock(time.Unix(1_000, 0))
		}
		sys, err := actor.NewSystem(cfg)
		require.NoError(t, err)
		c := &Cluster{sys: sys}
		before := time.Now()
		now := c.now()
		got := c.wallAt(now)
		if manual {
			require.False(t, got.Before(before), "wall %v, before %v", got, before)
		} else {
			require.Equal(t, now, got) // the same reading, monotonic clock included
		}
		require.NoError(t, sys.Shutdown(context.Background()))
	}
}
