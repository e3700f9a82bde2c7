package remote

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/internal/testnet"
)

// TestOutboundQueueBytesBound: a peer that takes nothing (here: nobody
// listens, so the endpoint keeps redialing) makes the sender hold at most
// OutboundQueueBytes of queued envelopes, not OutboundQueueSize × their
// size. The overflow is refused at once with ErrQueueFull, handed to
// Undelivered, counted in Stats.QueueFull, and reported by one
// EventQueueFull when the queue becomes full.
func TestOutboundQueueBytesBound(t *testing.T) {
	const payload, limit = 1 << 20, 4 << 20
	ser := NewSerializers()
	require.NoError(t, ser.RegisterProto(&wrapperspb.BytesValue{}))
	cfg := testConfig()
	cfg.Serializers = ser
	cfg.MaxFrameSize = 2 << 20
	cfg.OutboundQueueBytes = limit
	cfg.GiveUpAfter = time.Hour
	a, rec := startNode(t, cfg)
	addr := testnet.ClosedAddress(t)
	msg := wrapperspb.Bytes(make([]byte, payload))

	const total = 64
	accepted := 0
	for range total {
		err := a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: msg})
		if err == nil {
			accepted++
			continue
		}
		require.ErrorIs(t, err, ErrQueueFull)
	}
	// 4 MiB hold three 1 MiB envelopes with their overhead (the fourth
	// would exceed the limit); the count limit (8192) is far away.
	assert.Equal(t, limit/payload-1, accepted)
	assert.LessOrEqual(t, a.Stats().QueuedBytes, int64(limit))
	assert.Equal(t, uint64(total-accepted), a.Stats().QueueFull)
	rec.mu.Lock()
	full := 0
	for _, e := range rec.events {
		if e.Kind == EventQueueFull {
			full++
			assert.ErrorIs(t, e.Err, ErrQueueFull)
			assert.Equal(t, addr, e.Peer.Address)
		}
	}
	undelivered := len(rec.undelivered)
	rec.mu.Unlock()
	assert.Equal(t, 1, full, "one event when the queue becomes full, not one per refused envelope")
	assert.Equal(t, total-accepted, undelivered)
}

// TestOutQueueAccounting: the queue's byte count follows pushes, releases
// and drains exactly, and the full flag clears once the queue has drained
// below half of either limit.
func TestOutQueueAccounting(t *testing.T) {
	q := newOutQueue(100, 1000)
	c := &typeCodec{ser: SerializerJSON, name: "t"}
	push := func(size int64) error { return q.push(outItem{codec: c, size: size}) }
	for range 3 {
		require.NoError(t, push(300))
	}
	require.ErrorIs(t, push(300), ErrQueueFull, "1200 bytes would exceed 1000")
	assert.True(t, q.markFull(), "first refusal: report it")
	assert.False(t, q.markFull(), "already reported")
	assert.Equal(t, int64(900), q.bytesPending())
	release := func() {
		it, ok := q.pop()
		require.True(t, ok)
		q.release(1, it.size)
	}
	release()
	assert.Equal(t, int64(600), q.bytesPending())
	assert.False(t, q.markFull(), "still above half of the byte limit")
	release()
	release()
	assert.Equal(t, int64(0), q.bytesPending())
	assert.True(t, q.markFull(), "drained below half: a new episode is reported")
	require.NoError(t, push(1200), "an envelope larger than the limit still goes alone into an empty queue")
	require.ErrorIs(t, push(1), ErrQueueFull)
	q.close()
	q.drain(func(outItem) {})
	assert.Equal(t, int64(0), q.bytesPending())
	assert.True(t, errors.Is(push(1), errEndpointGone))
}
