package consul

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/cluster"
	"github.com/fraktor-go/fraktor/internal/backoff"
)

func TestDefaultConfigIsValidAndSafe(t *testing.T) {
	c := DefaultConfig()
	require.NoError(t, c.Validate())
	assert.Less(t, c.RenewInterval+c.RequestTimeout, c.FencePeriod)
	assert.Less(t, c.FencePeriod, c.SessionTTL)
	assert.GreaterOrEqual(t, c.SessionTTL, 10*time.Second, "stock Consul refuses session TTLs under 10s")
	assert.Equal(t, "fraktor-fraktor", c.serviceName())
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		mod  func(*Config)
		want string
	}{
		{"empty cluster name", func(c *Config) { c.Cluster = "" }, "Cluster is empty"},
		{"cluster name with slash", func(c *Config) { c.Cluster = "a/b" }, `Cluster "a/b"`},
		{"empty key prefix", func(c *Config) { c.KeyPrefix = "" }, "KeyPrefix"},
		{"key prefix with trailing slash", func(c *Config) { c.KeyPrefix = "fraktor/" }, "KeyPrefix"},
		// The agent's router cleans these out of the view query's URL
		// path while the member keys keep them: no member ever saw itself.
		{"key prefix with an empty segment", func(c *Config) { c.KeyPrefix = "a//b" }, "KeyPrefix"},
		{"key prefix with a dot segment", func(c *Config) { c.KeyPrefix = "a/./b" }, "KeyPrefix"},
		{"key prefix with a dot-dot segment", func(c *Config) { c.KeyPrefix = "../b" }, "KeyPrefix"},
		{"cluster name a dot segment", func(c *Config) { c.Cluster = "." }, `Cluster "."`},
		{"cluster name a dot-dot segment", func(c *Config) { c.Cluster = ".." }, `Cluster ".."`},
		{"bad service name", func(c *Config) { c.ServiceName = "a b" }, "ServiceName"},
		// Registered, but /v1/health/service/.. is no endpoint: nobody
		// could discover it.
		{"service name a dot segment", func(c *Config) { c.ServiceName = "." }, "ServiceName"},
		{"service name a dot-dot segment", func(c *Config) { c.ServiceName = ".." }, "ServiceName"},
		{"session TTL too short", func(c *Config) { c.SessionTTL = 500 * time.Millisecond }, "SessionTTL"},
		{"no renew interval", func(c *Config) { c.RenewInterval = 0 }, "RenewInterval"},
		{"no request timeout", func(c *Config) { c.RequestTimeout = 0 }, "RequestTimeout"},
		{"no fence period", func(c *Config) { c.FencePeriod = 0 }, "FencePeriod 0s must be positive"},
		{"renew plus timeout reaches fence", func(c *Config) {
			c.RenewInterval, c.RequestTimeout, c.FencePeriod = 4*time.Second, 6*time.Second, 10*time.Second
		},
			"must be shorter than FencePeriod"},
		// The sum overflowed to a negative duration and passed.
		{"renew interval overflows the sum", func(c *Config) { c.RenewInterval = math.MaxInt64 }, "must be shorter than FencePeriod"},
		{"request timeout overflows the sum", func(c *Config) { c.RequestTimeout = math.MaxInt64 }, "must be shorter than FencePeriod"},
		{"fence reaches session TTL", func(c *Config) { c.FencePeriod = c.SessionTTL }, "must be shorter than SessionTTL"},
		{"no wait", func(c *Config) { c.WaitTime = 0 }, "WaitTime"},
		{"wait over Consul's cap", func(c *Config) { c.WaitTime = 11 * time.Minute }, "WaitTime"},
		{"backoff max below base", func(c *Config) { c.BackoffMax = c.BackoffBase / 2 }, "BackoffMax"},
		// Doubling past it overflowed: the backoff computation panicked
		// after about 37 failed renewals (TestConfigBackoffWaitsStayInBounds).
		{"backoff max beyond a day", func(c *Config) { c.BackoffMax = math.MaxInt64 }, "BackoffMax"},
		{"negative retention", func(c *Config) { c.ReleasedRetention = -1 }, "ReleasedRetention"},
		{"deregister too soon", func(c *Config) { c.DeregisterCriticalAfter = time.Second }, "DeregisterCriticalAfter"},
		{"negative event buffer", func(c *Config) { c.EventBuffer = -1 }, "EventBuffer"},
		// Accepted, then Join panicked allocating it (makechan: size out of range).
		{"huge event buffer", func(c *Config) { c.EventBuffer = math.MaxInt }, "EventBuffer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mod(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorIs(t, err, cluster.ErrInvalidProviderConfig)
			assert.Contains(t, err.Error(), tc.want)
			assert.Contains(t, err.Error(), "consul: invalid config: ")
			_, err = New(c)
			require.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}

func TestConfigNeverShowsToken(t *testing.T) {
	const token = "s3cr3t-6f1c-token"
	c := DefaultConfig()
	c.API.Token = token
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("config", "consul", c)
	out := buf.String() + fmt.Sprint(c) + fmt.Sprintf("%v %s", c, c)
	assert.NotContains(t, out, token)
	assert.Contains(t, buf.String(), "token_set=true")
	assert.Contains(t, buf.String(), "fence_period=10s")
}

// The provider reports its lease timing, so the cluster checks the
// single-activation relations against it and computes W from its fence
// period (F 10 s, S 500 ms, P 500 ms, ρ 0.01 → W ≥ 11.22 s).
func TestProviderLeaseTimingFeedsClusterConfig(t *testing.T) {
	p, err := New(DefaultConfig())
	require.NoError(t, err)
	lt := p.LeaseTiming()
	require.Equal(t, DefaultConfig().FencePeriod, lt.FencePeriod)
	require.Equal(t, DefaultConfig().SessionTTL, lt.LeaseTTL)
	cfg := cluster.Config{Name: DefaultConfig().Cluster, Provider: p}
	require.NoError(t, cfg.Validate())
	cfg.WaitOut = 5 * time.Second // shorter than F+S+P: unsafe
	require.ErrorIs(t, cfg.Validate(), cluster.ErrInvalidConfig)
	require.ErrorContains(t, cfg.Validate(), "WaitOut")
	cfg.WaitOut, cfg.StopBudget = 0, 5*time.Second // (F+S)(1+ρ) ≥ T(1−ρ)
	require.ErrorContains(t, cfg.Validate(), "StopBudget")
}

// Every config Validate accepts gives retry waits within its backoff bounds,
// however many failures in a row: the renewal loop retries at least every
// RenewInterval, so dozens of failures come within a minute or two of an
// outage, and a BackoffMax whose double overflows made the wait negative
// (and the backoff panic).
func TestConfigBackoffWaitsStayInBounds(t *testing.T) {
	c := DefaultConfig()
	c.BackoffMax = 24 * time.Hour // the largest Validate accepts
	require.NoError(t, c.Validate())
	for failures := 1; failures <= 200; failures++ {
		d := backoff.Jittered(failures, c.BackoffBase, c.BackoffMax)
		require.Positive(t, d)
		require.LessOrEqual(t, d, c.BackoffMax)
	}
}
