package consul

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestWaitCtx(t *testing.T) {
	assert.True(t, waitCtx(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, waitCtx(ctx, time.Hour))
}

func TestEpochTracker(t *testing.T) {
	var e epochTracker
	var got []uint64
	regressions := 0
	for _, idx := range []uint64{10, 10, 15, 3, 3, 8, 20, 2} {
		epoch, regressed, from := e.observe(idx)
		if regressed {
			regressions++
			assert.Greater(t, from, idx)
		}
		got = append(got, epoch)
	}
	assert.Equal(t, []uint64{10, 10, 15, 16, 16, 21, 33, 34}, got)
	assert.Equal(t, 2, regressions)
}

func TestViewTimingStaysWithinFence(t *testing.T) {
	c := DefaultConfig()
	wait, timeout := c.viewTiming()
	assert.Equal(t, c.WaitTime, wait, "the defaults need no shortening")
	assert.LessOrEqual(t, timeout, c.FencePeriod)
	c.WaitTime = 20 * time.Second
	wait, timeout = c.viewTiming()
	assert.Equal(t, c.FencePeriod, timeout)
	assert.LessOrEqual(t, wait+wait/16+c.RequestTimeout, c.FencePeriod)
	assert.Positive(t, wait)
}
