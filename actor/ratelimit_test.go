package actor_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
	"github.com/fraktor-go/fraktor/testkit"
)

// S4: an actor limited to N msgs/s processes exactly Burst + N·t messages by
// virtual time t; the invoker suspends with RateLimit and the scheduler
// resumes it after the wait the middleware put in the metadata.
func TestRateLimitedActorExactRate(t *testing.T) {
	const perSecond, burst = 7, 3
	sys := testkit.NewManualSystem(t)
	processed := 0
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*msgN); ok {
			processed++
		}
	}, actor.WithInvokeMiddleware(func() scheduler.Middleware {
		rl, err := middleware.NewRateLimit(middleware.RateLimitConfig{PerSecond: perSecond, Burst: burst}, sys.Clock)
		require.NoError(t, err)
		return rl
	})))
	sys.RunUntilIdle()
	for i := 0; i < 1000; i++ {
		sys.Root().Send(pid, &msgN{i})
	}
	sys.RunUntilIdle()
	assert.Equal(t, burst, processed, "the burst at t=0")
	for sec := 1; sec <= 5; sec++ {
		sys.Advance(time.Second)
		assert.Equal(t, burst+perSecond*sec, processed, "after %ds", sec)
	}
	suspended := 0
	for _, r := range sys.TraceOf(pid) {
		if r.Kind == scheduler.ResultSuspended && r.Reason == scheduler.ReasonRateLimit {
			suspended++
		}
	}
	assert.Positive(t, suspended)
}
