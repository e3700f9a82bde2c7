package remotebench

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// peerLimit bounds starting and stopping a peer process.
const peerLimit = 30 * time.Second

// peerCmd re-executes this test binary as a peer of impl.
func peerCmd(tb testing.TB, impl string) *exec.Cmd {
	tb.Helper()
	exe, err := os.Executable()
	require.NoError(tb, err)
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), PeerEnv+"="+impl)
	return cmd
}

// startPair starts a peer process of impl and a client connected to it,
// warmed up (connected both ways). tb's cleanup stops the client, then the
// peer, and fails if either does not stop cleanly.
func startPair(tb testing.TB, impl string) Client {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
	defer cancel()
	peer, err := StartPeer(ctx, peerCmd(tb, impl))
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
		defer cancel()
		require.NoError(tb, peer.Close(ctx))
	})
	client, err := NewClient(impl, peer.Info)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
		defer cancel()
		require.NoError(tb, client.Close(ctx))
	})
	got, err := client.OneWay(1)
	require.NoError(tb, err)
	require.Equal(tb, 1, got)
	lat := make([]time.Duration, 1)
	got, err = client.PingPong(1, lat)
	require.NoError(tb, err)
	require.Equal(tb, 1, got)
	return client
}

// percentiles returns the median and the 99th percentile of lat (sorted
// in place).
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[(len(lat)*99)/100]
}
