package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

// B1.2: Validate names every bad field.
func TestConfigValidateNamesEveryField(t *testing.T) {
	reg, err := NewMemoryRegistry(DefaultMemoryConfig())
	require.NoError(t, err)
	defer reg.Close()
	props := actor.PropsFromFunc(func(actor.Context) {})
	base := func() Config { return Config{Name: "c", Provider: reg, Kinds: []Kind{NewKind("k", props)}} }
	require.NoError(t, base().Validate())
	noName := base()
	noName.Name = ""
	require.NoError(t, noName.Validate(), "an empty Name is remote's SystemName")
	for _, tc := range []struct {
		field string
		mut   func(*Config)
	}{
		{"Provider", func(c *Config) { c.Provider = nil }},
		{"RequestTimeout", func(c *Config) { c.RequestTimeout = -1 }},
		{"AttemptTimeout", func(c *Config) { c.RequestTimeout, c.AttemptTimeout = time.Second, 2*time.Second }},
		{"ActivationTimeout", func(c *Config) { c.ActivationTimeout = -1 }},
		{"IdleTimeout", func(c *Config) { c.IdleTimeout = -1 }},
		{"PidCacheCapacity", func(c *Config) { c.PidCacheCapacity = -1 }},
		{"PidCacheTTL", func(c *Config) { c.PidCacheTTL = -1 }},
		{"StopBudget", func(c *Config) { c.StopBudget = -1 }},
		{"MaxPause", func(c *Config) { c.MaxPause = -1 }},
		{"ClockDrift", func(c *Config) { c.ClockDrift = 0.5 }},
		{"WaitOut", func(c *Config) { c.WaitOut = -1 }},
		{"TickInterval", func(c *Config) { c.TickInterval = -1 }},
		{"Retry.MaxAttempts", func(c *Config) { c.Retry = RetryPolicy{MaxAttempts: -1, Base: 1, Max: 1} }},
		{"Kinds[0]", func(c *Config) { c.Kinds = []Kind{NewKind("", props)} }},
		{"has no props", func(c *Config) { c.Kinds = []Kind{NewKind("k", nil)} }},
		{"given twice", func(c *Config) { c.Kinds = []Kind{NewKind("k", props), NewKind("k", props)} }},
		{"not valid UTF-8", func(c *Config) { c.Kinds = []Kind{NewKind("k\xff", props)} }},
		{"StopBudget", func(c *Config) { c.StopBudget = 2 * time.Second }}, // (F+S)(1+ρ) ≥ T(1−ρ)
		{"WaitOut", func(c *Config) { c.WaitOut = time.Second }},           // W too short
		{"RenewTimeout", func(c *Config) { c.Provider = slowRenew{reg} }},  // R + renew timeout ≥ F
	} {
		t.Run(tc.field, func(t *testing.T) {
			c := base()
			tc.mut(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.Contains(t, err.Error(), tc.field)
		})
	}
}

// slowRenew reports a renew timeout that breaks R + renew timeout < F.
type slowRenew struct{ *MemoryRegistry }

func (s slowRenew) LeaseTiming() LeaseTiming {
	lt := s.MemoryRegistry.LeaseTiming()
	lt.RenewTimeout = lt.FencePeriod
	return lt
}
