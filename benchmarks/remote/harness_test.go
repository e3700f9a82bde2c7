package remotebench

import (
	"context"
	"errors"
	"fmt"
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
func peerCmd(impl string) (*exec.Cmd, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), PeerEnv+"="+impl)
	return cmd, nil
}

// newPair starts a peer process of impl and a client connected to it,
// warmed up (connected both ways). stop closes the client, then the peer.
func newPair(impl string) (c Client, stop func() error, err error) {
	cmd, err := peerCmd(impl)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
	defer cancel()
	peer, err := StartPeer(ctx, cmd)
	if err != nil {
		return nil, nil, err
	}
	closePeer := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
		defer cancel()
		return peer.Close(ctx)
	}
	c, err = NewClient(impl, peer.Info)
	if err != nil {
		return nil, nil, errors.Join(err, closePeer())
	}
	stop = func() error {
		ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
		defer cancel()
		return errors.Join(c.Close(ctx), closePeer())
	}
	if got, err := c.OneWay(1); err != nil || got != 1 {
		return nil, nil, errors.Join(fmt.Errorf("warm-up one-way: got %d: %w", got, err), stop())
	}
	lat := make([]time.Duration, 1)
	if got, err := c.PingPong(1, lat); err != nil || got != 1 {
		return nil, nil, errors.Join(fmt.Errorf("warm-up ping-pong: got %d: %w", got, err), stop())
	}
	return c, stop, nil
}

// startPair is newPair stopped by tb's cleanup.
func startPair(tb testing.TB, impl string) Client {
	tb.Helper()
	c, stop, err := newPair(impl)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, stop()) })
	return c
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
