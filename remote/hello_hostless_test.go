package remote

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A node without AdvertisedAddress takes its listener's address as its
// own. Peers refuse a hello whose address lacks a host or a port
// (decodeHello), so Start refuses such an address instead: a MemoryNetwork
// listener on ":0" gave ":<port>", the node started with a valid Config,
// and every handshake with it then failed with ErrMalformed.
func TestStartRefusesAnAddressPeersRefuse(t *testing.T) {
	cfg := testConfig()
	cfg.ListenAddress = ":0"
	require.NoError(t, cfg.Validate())
	n, err := NewNode(cfg, newRecorder().hooks(), WithTransport(NewMemoryNetwork()))
	require.NoError(t, err)
	err = n.Start(context.Background())
	require.ErrorIs(t, err, ErrInvalidConfig)
	require.NoError(t, n.Close(context.Background()))
}
