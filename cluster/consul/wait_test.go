package consul

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/hashicorp/consul/api"
	"github.com/stretchr/testify/assert"
)

func TestWaitCtx(t *testing.T) {
	assert.True(t, waitCtx(context.Background(), 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	assert.False(t, waitCtx(ctx, time.Hour))
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

func TestClassifyRateLimited(t *testing.T) {
	err := classify(api.StatusError{Code: 429, Body: "Too Many Requests"})
	assert.ErrorIs(t, err, ErrRateLimited)
	assert.ErrorIs(t, err, ErrRequestFailed)
	err = classify(fmt.Errorf("Unexpected response code: %d", 429)) // Session().Renew
	assert.ErrorIs(t, err, ErrRateLimited)
	err = classify(api.StatusError{Code: 500, Body: "boom"})
	assert.ErrorIs(t, err, ErrRequestFailed)
	assert.NotErrorIs(t, err, ErrRateLimited)
}
