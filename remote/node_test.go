package remote

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/internal/testnet"
	"github.com/fraktor-go/fraktor/scheduler"
)

// transports runs a test over real TCP on loopback and over the in-memory
// network: the code above the Transport is the same.
func transports(t *testing.T, f func(t *testing.T, cfg func() Config, opts []Option)) {
	t.Run("tcp", func(t *testing.T) { f(t, testConfig, nil) })
	t.Run("memory", func(t *testing.T) {
		mem := NewMemoryNetwork()
		cfg := func() Config {
			c := testConfig()
			c.ListenAddress = "mem:0"
			return c
		}
		f(t, cfg, []Option{WithTransport(mem)})
	})
}

func TestNodeExchange(t *testing.T) {
	transports(t, func(t *testing.T, cfg func() Config, opts []Option) {
		ser := NewSerializers()
		require.NoError(t, ser.RegisterProto(&wrapperspb.StringValue{}))
		ca, cb := cfg(), cfg()
		ca.Serializers, cb.Serializers = ser, ser
		a, ra := startNode(t, ca, opts...)
		b, rb := startNode(t, cb, opts...)

		require.NoError(t, a.Send(b.Address(), Envelope{
			Target: PIDRef{b.Address(), "echo"}, Sender: PIDRef{a.Address(), "asker"}, Message: wrapperspb.String("hello"),
		}))
		rb.waitUntil(t, "delivery at b", func(r *recorder) bool { return len(r.delivered) == 1 })
		d := rb.delivered[0]
		assert.Equal(t, Peer{Address: a.Address(), NodeID: a.NodeID()}, d.From)
		assert.Equal(t, PIDRef{b.Address(), "echo"}, d.Env.Target)
		assert.Equal(t, PIDRef{a.Address(), "asker"}, d.Env.Sender)
		assert.True(t, proto.Equal(wrapperspb.String("hello"), d.Env.Message.(proto.Message)))

		// The answer reuses the connection b accepted: no second connection.
		require.NoError(t, b.Send(d.Env.Sender.Address, Envelope{Target: d.Env.Sender, Message: &Pong{Seq: 1}}))
		ra.waitUntil(t, "reply at a", func(r *recorder) bool { return len(r.delivered) == 1 })
		assert.Equal(t, &Pong{Seq: 1}, ra.delivered[0].Env.Message)
		assert.True(t, ra.delivered[0].Env.Sender.IsZero())
		assert.Equal(t, int64(1), a.Stats().Connections)
		assert.Equal(t, int64(1), b.Stats().Connections)
		// The counters move after the fact: EnvelopesSent after the write
		// returns, which may be after the reply arrived; EnvelopesReceived
		// once per frame, after the Deliver hook returned for each of its
		// envelopes, which may be after the test saw the delivery and even
		// after the reply arrived (a reader preempted between the two).
		require.Eventually(t, func() bool { return a.Stats().EnvelopesSent == 1 }, waitTimeout, time.Millisecond)
		require.Eventually(t, func() bool { return b.Stats().EnvelopesReceived == 1 }, waitTimeout, time.Millisecond)
	})
}

// TestOrderingManySenders: three nodes over TCP; two of them send to the
// third from many goroutines at once; every sender's messages arrive
// complete and in order (per sender→receiver order).
func TestOrderingManySenders(t *testing.T) {
	const senders, perSender = 8, 1500
	sink, rs := startNode(t, testConfig())
	var mu sync.Mutex
	next := map[string]uint64{} // sender key → next expected seq
	var bad []string
	rs.onDeliver = func(from Peer, env Envelope) {
		key := from.Address + "/" + env.Sender.ID
		seq := env.Message.(*Ping).Seq
		mu.Lock()
		if seq != next[key] {
			bad = append(bad, fmt.Sprintf("%s: got %d want %d", key, seq, next[key]))
		}
		next[key] = seq + 1
		mu.Unlock()
	}
	var wg sync.WaitGroup
	for range 2 {
		cfg := testConfig()
		cfg.OutboundQueueSize = senders * perSender
		src, _ := startNode(t, cfg)
		for g := range senders {
			wg.Go(func() {
				for i := range perSender {
					err := src.Send(sink.Address(), Envelope{
						Target: PIDRef{sink.Address(), "sink"}, Sender: PIDRef{src.Address(), fmt.Sprintf("g%d", g)}, Message: ping(uint64(i)),
					})
					if err != nil {
						t.Errorf("send: %v", err)
						return
					}
				}
			})
		}
	}
	wg.Wait()
	rs.waitUntil(t, "all messages", func(r *recorder) bool { return len(r.delivered) == 2*senders*perSender })
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, bad)
	assert.Len(t, next, 2*senders)
	for k, v := range next {
		assert.Equal(t, uint64(perSender), v, k)
	}
	st := sink.Stats()
	assert.Less(t, st.FramesReceived, uint64(2*senders*perSender), "envelopes are coalesced into fewer frames under load")
}

// TestReconnectAfterPeerRestart: the peer dies (no goodbye) and a new
// incarnation starts on the same address; envelopes queued meanwhile reach
// it, and the old incarnation is reported terminated (restarted).
func TestReconnectAfterPeerRestart(t *testing.T) {
	a, ra := startNode(t, testConfig())
	bcfg := testConfig()
	b1, rb1 := startNode(t, bcfg)
	addr := b1.Address()
	require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(0)}))
	rb1.waitUntil(t, "first delivery", func(r *recorder) bool { return len(r.delivered) == 1 })

	dead, cancel := context.WithCancel(context.Background())
	cancel()
	_ = b1.Close(dead) // abrupt: no goodbye
	assert.Empty(t, rb1.terminated)
	ra.waitEvent(t, EventDisconnected, ErrConnectionLost)

	for i := 1; i <= 5; i++ {
		require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(uint64(i))}))
	}
	ra.waitEvent(t, EventDialFailed, nil) // a keeps trying while b is down

	bcfg.ListenAddress = addr
	b2, rb2 := startNode(t, bcfg)
	require.Equal(t, addr, b2.Address())
	rb2.waitUntil(t, "queued deliveries", func(r *recorder) bool { return len(r.delivered) == 5 })
	for i, d := range rb2.delivered {
		assert.Equal(t, ping(uint64(i+1)), d.Env.Message)
	}
	ra.waitUntil(t, "restart reported", func(r *recorder) bool { return len(r.terminated) == 1 })
	assert.Equal(t, Peer{Address: addr, NodeID: b1.NodeID()}, ra.terminated[0].Peer)
	assert.ErrorIs(t, ra.terminated[0].Reason, ErrPeerRestarted)
}

// TestGiveUpUnreachablePeer: an unreachable peer is given up after
// GiveUpAfter on the Node's clock (an hour here, on a manual clock: nothing
// waits it out); its queue goes to Undelivered and a later Send starts over.
func TestGiveUpUnreachablePeer(t *testing.T) {
	addr := testnet.ClosedAddress(t)

	cfg := testConfig()
	cfg.GiveUpAfter = time.Hour
	clock := scheduler.NewManualClock(time.Now())
	a, ra := startNode(t, cfg, WithClock(clock))
	for i := range 3 {
		require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(uint64(i))}))
	}
	// dialFailedAfter: a failed dial after the n-th peer-terminated event.
	// (Advance fires the backoff timer at its own deadline on the way, so
	// an endpoint may dial again before it gives up.)
	dialFailedAfter := func(n int) func(r *recorder) bool {
		return func(r *recorder) bool {
			for _, e := range r.events {
				switch {
				case e.Kind == EventPeerTerminated:
					n--
				case e.Kind == EventDialFailed && n <= 0:
					return true
				}
			}
			return false
		}
	}
	ra.waitUntil(t, "a failed dial", dialFailedAfter(0))
	ra.mu.Lock()
	assert.Empty(t, ra.terminated, "the clock has not moved: no give-up yet")
	ra.mu.Unlock()
	clock.Advance(cfg.GiveUpAfter)
	ra.waitUntil(t, "peer terminated", func(r *recorder) bool { return len(r.terminated) == 1 })
	assert.ErrorIs(t, ra.terminated[0].Reason, ErrPeerUnreachable)
	ra.waitUntil(t, "queue dropped", func(r *recorder) bool { return len(r.undelivered) == 3 })
	for _, u := range ra.undelivered {
		assert.ErrorIs(t, u.Err, ErrPeerUnreachable)
		assert.False(t, u.Inbound)
		assert.IsType(t, &Ping{}, u.Envelope.Message)
	}
	assert.Equal(t, uint64(3), a.Stats().Undelivered)
	// A later Send starts over with a fresh endpoint.
	require.NoError(t, a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(9)}))
	ra.waitUntil(t, "the new endpoint's failed dial", dialFailedAfter(1))
	clock.Advance(cfg.GiveUpAfter)
	ra.waitUntil(t, "second give-up", func(r *recorder) bool { return len(r.terminated) == 2 })
}

// TestOutboundQueueOverflow: the queue is bounded; overflow goes to the
// Undelivered hook, counted, and every envelope is accounted for exactly
// once (queued ones become Undelivered when the node closes).
func TestOutboundQueueOverflow(t *testing.T) {
	addr := testnet.ClosedAddress(t)

	cfg := testConfig()
	cfg.OutboundQueueSize = 4
	cfg.GiveUpAfter = time.Hour
	rec := newRecorder()
	a, err := NewNode(cfg, rec.hooks())
	require.NoError(t, err)
	require.NoError(t, a.Start(context.Background()))
	const total = 20
	accepted := 0
	for i := range total {
		err := a.Send(addr, Envelope{Target: PIDRef{addr, "x"}, Message: ping(uint64(i))})
		if err == nil {
			accepted++
			continue
		}
		require.ErrorIs(t, err, ErrQueueFull)
	}
	// The queue holds 4; the endpoint may hold one more it is about to send.
	assert.GreaterOrEqual(t, accepted, cfg.OutboundQueueSize)
	assert.LessOrEqual(t, accepted, cfg.OutboundQueueSize+1)
	rec.mu.Lock()
	overflow := len(rec.undelivered)
	for _, u := range rec.undelivered {
		assert.ErrorIs(t, u.Err, ErrQueueFull)
	}
	rec.mu.Unlock()
	assert.Equal(t, total-accepted, overflow)
	assert.Equal(t, uint64(overflow), a.Stats().Undelivered)

	require.NoError(t, a.Close(context.Background()))
	assert.ErrorIs(t, a.Send(addr, Envelope{Message: ping(1)}), ErrStopped)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	assert.Len(t, rec.undelivered, total+1, "every envelope is reported exactly once")
	for _, u := range rec.undelivered[overflow:total] {
		assert.ErrorIs(t, u.Err, ErrStopped)
	}
}

// TestGracefulCloseFlushesAndSaysGoodbye: Close writes what is queued, then
// the peer learns at once that the node is gone.
func TestGracefulCloseFlushesAndSaysGoodbye(t *testing.T) {
	transports(t, func(t *testing.T, cfg func() Config, opts []Option) {
		a, _ := startNode(t, cfg(), opts...)
		b, rb := startNode(t, cfg(), opts...)
		const n = 500
		for i := range n {
			require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(uint64(i))}))
		}
		require.NoError(t, a.Close(context.Background()))
		rb.waitUntil(t, "goodbye", func(r *recorder) bool { return len(r.terminated) == 1 })
		assert.Equal(t, n, rb.countDelivered(), "everything queued before Close was flushed")
		assert.ErrorIs(t, rb.terminated[0].Reason, ErrPeerShutdown)
		assert.Equal(t, a.NodeID(), rb.terminated[0].Peer.NodeID)
		require.NoError(t, a.Close(context.Background()), "Close is idempotent")
	})
}

// TestSimultaneousDial: both nodes send to each other at the same moment;
// they converge on one connection and everything is delivered.
func TestSimultaneousDial(t *testing.T) {
	transports(t, func(t *testing.T, cfg func() Config, opts []Option) {
		for round := range 10 {
			a, ra := startNode(t, cfg(), opts...)
			b, rb := startNode(t, cfg(), opts...)
			var start sync.WaitGroup
			start.Add(1)
			var wg sync.WaitGroup
			for _, p := range [][2]*Node{{a, b}, {b, a}} {
				wg.Go(func() {
					start.Wait()
					for i := range 50 {
						_ = p[0].Send(p[1].Address(), Envelope{Target: PIDRef{p[1].Address(), "x"}, Message: ping(uint64(i))})
					}
				})
			}
			start.Done()
			wg.Wait()
			ra.waitUntil(t, "a got all", func(r *recorder) bool { return len(r.delivered) == 50 })
			rb.waitUntil(t, "b got all", func(r *recorder) bool { return len(r.delivered) == 50 })
			for i, d := range ra.delivered {
				require.Equal(t, ping(uint64(i)), d.Env.Message, "round %d", round)
			}
			for i, d := range rb.delivered {
				require.Equal(t, ping(uint64(i)), d.Env.Message, "round %d", round)
			}
			assert.Empty(t, ra.undelivered)
			assert.Empty(t, rb.undelivered)
			ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
			require.NoError(t, a.Close(ctx))
			require.NoError(t, b.Close(ctx))
			cancel()
		}
	})
}

// TestHeartbeatsKeepIdleConnectionAlive: an idle connection pings every
// HeartbeatInterval of the Node's clock (an hour, on a manual clock) and
// pings are answered; a connection that wrote during an interval does not
// ping at its end.
func TestHeartbeatsKeepIdleConnectionAlive(t *testing.T) {
	cfg := testConfig()
	cfg.ListenAddress = "mem:0"
	cfg.HeartbeatInterval = time.Hour
	cfg.HeartbeatTimeout = 2 * time.Hour
	mem := NewMemoryNetwork()
	clock := scheduler.NewManualClock(time.Now())
	a, _ := startNode(t, cfg, WithTransport(mem), WithClock(clock))
	b, rb := startNode(t, cfg, WithTransport(mem), WithClock(clock))
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(0)}))
	rb.waitUntil(t, "delivery", func(r *recorder) bool { return len(r.delivered) == 1 })
	assert.Equal(t, uint64(1), b.Stats().FramesReceived, "no ping before the clock moves")
	assert.Equal(t, uint64(0), a.Stats().FramesReceived)
	// Idle now: each interval brings pings and pongs both ways. The writers
	// arm their timers when their connection starts, which may be after an
	// Advance, so the clock moves until the frames are there.
	require.Eventually(t, func() bool {
		clock.Advance(cfg.HeartbeatInterval)
		return a.Stats().FramesReceived >= 4 && b.Stats().FramesReceived >= 5
	}, waitTimeout, time.Millisecond)
	assert.Equal(t, int64(1), a.Stats().Connections)
}

func TestSendErrors(t *testing.T) {
	a, ra := startNode(t, testConfig())
	type unregistered struct{}
	err := a.Send("127.0.0.1:1", Envelope{Message: unregistered{}})
	assert.ErrorIs(t, err, ErrUnknownType)
	err = a.Send(a.Address(), Envelope{Message: ping(1)})
	assert.ErrorIs(t, err, ErrIdentityMismatch)
	cfg := testConfig()
	cfg.MaxFrameSize = MinFrameSize
	small, _ := startNode(t, cfg)
	err = small.Send("127.0.0.1:1", Envelope{Target: PIDRef{"127.0.0.1:1", string(make([]byte, maxIDLen))}, Message: ping(1)})
	assert.ErrorIs(t, err, ErrFrameTooLarge)
	err = a.Send("127.0.0.1:1", Envelope{Target: PIDRef{"x", string(make([]byte, maxIDLen+1))}, Message: ping(1)})
	assert.ErrorIs(t, err, ErrMalformed)
	ra.mu.Lock()
	assert.Len(t, ra.undelivered, 3)
	ra.mu.Unlock()

	n, err := NewNode(testConfig(), Hooks{})
	require.NoError(t, err)
	assert.ErrorIs(t, n.Send("127.0.0.1:1", Envelope{Message: ping(1)}), ErrStopped, "before Start")
	require.NoError(t, n.Close(context.Background()))
	assert.ErrorIs(t, n.Start(context.Background()), ErrStopped)
}
