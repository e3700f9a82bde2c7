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

// A node listening on all interfaces without AdvertisedAddress would
// advertise "[::]:<port>" (or "0.0.0.0:<port>"): a peer on another host
// that dials it reaches itself. Start refuses it and says what to set;
// with AdvertisedAddress the same listener starts.
func TestStartRefusesAnUnspecifiedAddress(t *testing.T) {
	for _, listen := range []string{"0.0.0.0:0", ":0"} {
		cfg := testConfig()
		cfg.ListenAddress = listen
		n, err := NewNode(cfg, newRecorder().hooks())
		require.NoError(t, err)
		err = n.Start(context.Background())
		require.ErrorIs(t, err, ErrInvalidConfig, listen)
		require.ErrorContains(t, err, "AdvertisedAddress", listen)
		require.NoError(t, n.Close(context.Background()))

		cfg.AdvertisedAddress = "127.0.0.1:1"
		n, err = NewNode(cfg, newRecorder().hooks())
		require.NoError(t, err)
		require.NoError(t, n.Start(context.Background()), listen)
		require.Equal(t, "127.0.0.1:1", n.Address())
		require.NoError(t, n.Close(context.Background()))
	}
}

// A Start that fails leaves the node without an address: Address() stays
// "" instead of naming a listener that was closed, and a PID made for it
// would carry no address peers could reach.
func TestFailedStartLeavesNoAddress(t *testing.T) {
	for _, tc := range []struct {
		listen string
		opts   []Option
	}{
		{":0", []Option{WithTransport(NewMemoryNetwork())}}, // not host:port
		{"0.0.0.0:0", nil}, // the unspecified address
	} {
		cfg := testConfig()
		cfg.ListenAddress = tc.listen
		n, err := NewNode(cfg, newRecorder().hooks(), tc.opts...)
		require.NoError(t, err)
		require.ErrorIs(t, n.Start(context.Background()), ErrInvalidConfig, tc.listen)
		require.Empty(t, n.Address(), tc.listen)
		require.NoError(t, n.Close(context.Background()))
	}
}
