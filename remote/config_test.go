package remote

import (
	"crypto/tls"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/fraktor-go/fraktor/actor"
)

func TestDefaultConfigIsValid(t *testing.T) {
	require.NoError(t, DefaultConfig().Validate())
}

// TestDialBudgetZeroIsDefault: a Config without a DialBudget (0) gets
// DefaultDialBudget, as a burst too.
func TestDialBudgetZeroIsDefault(t *testing.T) {
	c := DefaultConfig()
	c.DialBudget = 0
	n, err := NewNode(c, Hooks{})
	require.NoError(t, err)
	assert.Equal(t, DefaultDialBudget, n.dials.Burst())
	assert.InDelta(t, float64(DefaultDialBudget), float64(n.dials.Limit()), 0)
}

// TestMaxWatchesPerPeerZeroIsDefault: a Config without MaxWatchesPerPeer
// (0) bounds a peer's watches at DefaultMaxWatchesPerPeer.
func TestMaxWatchesPerPeerZeroIsDefault(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, DefaultMaxWatchesPerPeer, c.MaxWatchesPerPeer)
	c.MaxWatchesPerPeer = 0
	require.NoError(t, c.Validate())
	assert.Equal(t, DefaultMaxWatchesPerPeer, c.maxWatchesPerPeer())
	c.MaxWatchesPerPeer = 3
	assert.Equal(t, 3, c.maxWatchesPerPeer())
}

// TestMaxSpawnsPerPeerZeroIsDefault: a Config without MaxSpawnsPerPeer
// (0) bounds a peer's spawned actors at DefaultMaxSpawnsPerPeer.
func TestMaxSpawnsPerPeerZeroIsDefault(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, DefaultMaxSpawnsPerPeer, c.MaxSpawnsPerPeer)
	c.MaxSpawnsPerPeer = 0
	require.NoError(t, c.Validate())
	assert.Equal(t, DefaultMaxSpawnsPerPeer, c.maxSpawnsPerPeer())
	c.MaxSpawnsPerPeer = 3
	assert.Equal(t, 3, c.maxSpawnsPerPeer())
}

// TestMaxMailboxBacklogZeroIsDefault: a Config without MaxMailboxBacklog
// (0) bounds an actor's backlog of messages from peers at
// DefaultMaxMailboxBacklog, which the Node's reader uses; math.MaxInt is
// valid (no bound in practice).
func TestMaxMailboxBacklogZeroIsDefault(t *testing.T) {
	c := DefaultConfig()
	assert.Equal(t, DefaultMaxMailboxBacklog, c.MaxMailboxBacklog)
	c.MaxMailboxBacklog = 0
	require.NoError(t, c.Validate())
	assert.Equal(t, DefaultMaxMailboxBacklog, c.maxMailboxBacklog())
	n, err := NewNode(c, Hooks{})
	require.NoError(t, err)
	assert.Equal(t, DefaultMaxMailboxBacklog, n.maxBacklog)
	c.MaxMailboxBacklog = math.MaxInt
	require.NoError(t, c.Validate())
	assert.Equal(t, math.MaxInt, c.maxMailboxBacklog())
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
	}{
		{"listen address", func(c *Config) { c.ListenAddress = "nohostport" }},
		{"advertised address", func(c *Config) { c.AdvertisedAddress = "::bad" }},
		{"advertised address without host", func(c *Config) { c.AdvertisedAddress = ":4000" }},
		{"advertised address without port", func(c *Config) { c.AdvertisedAddress = "node-1:" }},
		// Other nodes cannot dial the unspecified address (all
		// interfaces); Start refuses it for a listener's address already.
		{"unspecified advertised address", func(c *Config) { c.AdvertisedAddress = "0.0.0.0:4000" }},
		{"unspecified IPv6 advertised address", func(c *Config) { c.AdvertisedAddress = "[::]:4000" }},
		{"empty system name", func(c *Config) { c.SystemName = "" }},
		{"long node id", func(c *Config) { c.NodeID = string(make([]byte, 300)) }},
		{"tls one side", func(c *Config) { c.ClientTLS = &tls.Config{} }},
		{"tls without cert", func(c *Config) { c.ClientTLS, c.ServerTLS = &tls.Config{}, &tls.Config{} }},
		{"frame too small", func(c *Config) { c.MaxFrameSize = 100 }},
		{"frame too large", func(c *Config) { c.MaxFrameSize = MaxFrameSize + 1 }},
		{"zero dial timeout", func(c *Config) { c.DialTimeout = 0 }},
		{"heartbeat timeout not above interval", func(c *Config) { c.HeartbeatTimeout = c.HeartbeatInterval }},
		{"backoff max below min", func(c *Config) { c.ReconnectBackoffMax = time.Millisecond }},
		{"queue", func(c *Config) { c.OutboundQueueSize = 0 }},
		{"queue bytes below frame size", func(c *Config) { c.OutboundQueueBytes = int64(c.MaxFrameSize) - 1 }},
		{"pending handshakes", func(c *Config) { c.MaxPendingHandshakes = 0 }},
		{"negative dial budget", func(c *Config) { c.DialBudget = -1 }},
		{"negative watches per peer", func(c *Config) { c.MaxWatchesPerPeer = -1 }},
		{"negative spawns per peer", func(c *Config) { c.MaxSpawnsPerPeer = -1 }},
		{"negative mailbox backlog", func(c *Config) { c.MaxMailboxBacklog = -1 }},
		{"nil kind props", func(c *Config) { c.Kinds = map[string]*actor.Props{"a": nil} }},
		{"empty kind", func(c *Config) { c.Kinds = map[string]*actor.Props{"": actor.PropsFromFunc(func(actor.Context) {})} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultConfig()
			tt.mutate(&c)
			err := c.Validate()
			require.ErrorIs(t, err, ErrInvalidConfig)
			_, err = NewNode(c, Hooks{})
			assert.ErrorIs(t, err, ErrInvalidConfig)
		})
	}
}
