package remotebench

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var impls = []string{ImplFraktor, ImplProto, ImplRawTCP, ImplRawProto}

// TestRemoteWorkloads runs both workloads of both implementations at a
// small size against a real peer process and checks the counts, so a
// benchmark that silently loses or skips messages fails here. The one-way
// size crosses the flow-control window twice.
func TestRemoteWorkloads(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) {
			c := startPair(t, impl)
			for _, n := range []int{2*Window + 5, 7} { // second run: the sink resets
				got, err := c.OneWay(n)
				require.NoError(t, err)
				assert.Equal(t, n, got)
			}
			lat := make([]time.Duration, 50)
			got, err := c.PingPong(len(lat), lat)
			require.NoError(t, err)
			assert.Equal(t, len(lat), got)
			for i, d := range lat {
				assert.Positive(t, d, "round trip %d", i)
			}
			clear(lat)
			got, err = Mixed(c, len(lat), lat)
			require.NoError(t, err)
			assert.Equal(t, len(lat), got)
			for i, d := range lat {
				assert.Positive(t, d, "mixed local round trip %d", i)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	_, err := NewClient("akka", PeerInfo{})
	require.ErrorIs(t, err, ErrUnknownImpl)
	require.ErrorIs(t, ServePeer(context.Background(), "akka", nil, nil), ErrUnknownImpl)

	c, err := NewClient(ImplFraktor, PeerInfo{Address: "127.0.0.1:1", Sink: sinkName, Echo: echoName})
	require.NoError(t, err)
	defer func() { require.NoError(t, c.Close(context.Background())) }()
	for name, run := range map[string]func() error{
		"oneway zero":   func() error { _, err := c.OneWay(0); return err },
		"pingpong zero": func() error { _, err := c.PingPong(0, nil); return err },
		"pingpong lat":  func() error { _, err := c.PingPong(2, make([]time.Duration, 1)); return err },
	} {
		t.Run(name, func(t *testing.T) { require.ErrorIs(t, run(), ErrBadSize) })
	}
}

// A peer that exits before it announced itself is ErrPeer, not a hang.
func TestStartPeerFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), peerLimit)
	defer cancel()
	cmd, err := peerCmd("akka")
	require.NoError(t, err)
	_, err = StartPeer(ctx, cmd)
	require.ErrorIs(t, err, ErrPeer)
	require.ErrorContains(t, err, "unknown implementation")
}

// The window coalesces counts without blocking the reporter and wakes the
// sender once enough are acknowledged.
func TestWindow(t *testing.T) {
	w := newWindow()
	for i := range int64(1000) { // more than the channel holds: never blocks
		w.ack(i + 1)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	require.NoError(t, w.waitBelow(ctx, 1000, 1))
	assert.Equal(t, int64(1000), w.acked)
	cancel()
	require.ErrorIs(t, w.waitBelow(ctx, 2000, 1), ErrStalled)
}
