package remote

import (
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// echoPongs makes b answer every Ping with a Pong from its Deliver hook
// (the reader goroutine) and returns the channel a's recorder puts each
// Pong's sequence number on.
func echoPongs(t *testing.T, b *Node, ra, rb *recorder) <-chan uint64 {
	t.Helper()
	got := make(chan uint64, 1)
	rb.onDeliver = func(_ Peer, env Envelope) {
		if p, ok := env.Message.(*Ping); ok {
			if err := b.Send(env.Sender.Address, Envelope{Target: env.Sender, Message: &Pong{Seq: p.Seq}}); err != nil {
				t.Errorf("reply: %v", err)
			}
		}
	}
	ra.onDeliver = func(_ Peer, env Envelope) {
		if p, ok := env.Message.(*Pong); ok {
			got <- p.Seq
		}
	}
	return got
}

// roundTrips makes n sequential round trips from a to b: b answers every
// Ping with a Pong from its Deliver hook (the reader goroutine), and the
// test goroutine sends the next Ping only once the Pong arrived.
func roundTrips(t *testing.T, a, b *Node, ra, rb *recorder, n int) {
	t.Helper()
	got := echoPongs(t, b, ra, rb)
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	for i := range uint64(n) {
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "echo"}, Sender: PIDRef{a.Address(), "asker"}, Message: ping(i)}))
		select {
		case seq := <-got:
			require.Equal(t, i, seq)
		case <-deadline.C:
			t.Fatalf("round trip %d timed out", i)
		}
	}
}

// TestDirectWriteRoundTrips: request/response traffic over a
// kernel-buffered stream (TCP, TLS over TCP) is written by the sending
// goroutine, without the hand-off to the endpoint's writer goroutine; over
// the synchronous in-memory pipes it never is (a direct write from a reader
// goroutine could wait for the peer's reader there).
func TestDirectWriteRoundTrips(t *testing.T) {
	const n = 50
	ca := newTestCA(t)
	for _, tc := range []struct {
		name   string
		cfg    func(name string) Config
		opts   func() []Option
		direct bool
	}{
		{"tcp", func(string) Config { return testConfig() }, func() []Option { return nil }, true},
		{"tls", func(name string) Config { return mtlsConfig(t, ca, name) }, func() []Option { return nil }, true},
		{"memory", func(string) Config {
			c := testConfig()
			c.ListenAddress = "mem:0"
			return c
		}, func() []Option { return []Option{WithTransport(sharedMem)} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts()
			a, ra := startNode(t, tc.cfg("127.0.0.1"), opts...)
			b, rb := startNode(t, tc.cfg("127.0.0.1"), opts...)
			roundTrips(t, a, b, ra, rb, n)
			da, db := a.stats.directWrites.Load(), b.stats.directWrites.Load()
			if !tc.direct {
				assert.Zero(t, da)
				assert.Zero(t, db)
				return
			}
			// b answers each Ping directly but the first (its endpoint had no
			// connection yet). a's first Ping is queued too, and a's next
			// Ping may be sent while a's writer goroutine is still inside
			// that write (it holds the write lock until the write returned,
			// and here the answer comes back from b's reader at once): then
			// it queues as well, to keep the order, and a can stay on the
			// writer goroutine for a while. So the pair counts, with a margin.
			assert.GreaterOrEqual(t, da+db, uint64(n/2), "direct writes: a %d, b %d", da, db)
			assert.Zero(t, a.Stats().Undelivered)
			assert.Zero(t, b.Stats().Undelivered)
		})
	}
}

// sharedMem is one in-memory network for the memory cases.
var sharedMem = NewMemoryNetwork()

// TestDirectWriteBurstGoesThroughWriter: a burst of one-way sends is not
// written send by send: a direct write needs a frame from the peer since
// the previous one, so the burst queues and the writer goroutine batches
// it.
func TestDirectWriteBurstGoesThroughWriter(t *testing.T) {
	const total = 3000
	cfg := testConfig()
	cfg.OutboundQueueSize = total
	a, _ := startNode(t, cfg)
	b, rb := startNode(t, testConfig())
	// Connect first, and let the writer goroutine finish that write: the
	// burst starts on an idle connection, where a direct write is possible.
	warm := Envelope{Target: PIDRef{b.Address(), "warm-up"}, Message: &Pong{}}
	require.NoError(t, a.Send(b.Address(), warm))
	rb.waitUntil(t, "the warm-up", func(r *recorder) bool { return len(r.delivered) == 1 })
	require.Eventually(t, func() bool { return a.Stats().EnvelopesSent == 1 }, waitTimeout, time.Millisecond)
	rb.mu.Lock()
	rb.delivered = nil
	rb.mu.Unlock()
	for i := range uint64(total) {
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "sink"}, Message: ping(i)}))
	}
	rb.waitUntil(t, "the burst", func(r *recorder) bool { return len(r.delivered) == total })
	for i, d := range rb.delivered {
		require.Equal(t, uint64(i), d.Env.Message.(*Ping).Seq)
	}
	// b sends nothing but heartbeats: each allows one direct write, and the
	// first send needs none.
	in := a.Stats().FramesReceived
	assert.LessOrEqual(t, a.stats.directWrites.Load(), in+1, "direct writes, with %d frames received", in)
}

// TestOrderingDirectAndQueued: many goroutines send bursts to one node
// that answers every envelope, each waiting for the answer to its burst's
// last envelope before the next burst, so that direct writes (an answer
// arrived, nothing queued) and queued batches (the writer goroutine)
// alternate on one connection; every sender's envelopes still arrive
// complete and in Send order.
func TestOrderingDirectAndQueued(t *testing.T) {
	const senders, perSender, burst = 8, 400, 4
	cfg := testConfig()
	cfg.OutboundQueueSize = senders * perSender
	src, rsrc := startNode(t, cfg)
	sink, rs := startNode(t, testConfig())
	answered := make([]chan uint64, senders)
	for g := range answered {
		answered[g] = make(chan uint64, perSender)
	}
	rsrc.onDeliver = func(_ Peer, env Envelope) {
		var g int
		if _, err := fmt.Sscanf(env.Target.ID, "g%d", &g); err != nil {
			t.Errorf("answer to %q", env.Target.ID)
			return
		}
		answered[g] <- env.Message.(*Pong).Seq
	}
	var mu sync.Mutex
	next := map[string]uint64{}
	var bad []string
	rs.onDeliver = func(from Peer, env Envelope) {
		key := env.Sender.ID
		seq := env.Message.(*Ping).Seq
		mu.Lock()
		if seq != next[key] {
			bad = append(bad, fmt.Sprintf("%s: got %d want %d", key, seq, next[key]))
		}
		next[key] = seq + 1
		mu.Unlock()
		if err := sink.Send(src.Address(), Envelope{Target: env.Sender, Message: &Pong{Seq: seq}}); err != nil {
			t.Errorf("answer: %v", err)
		}
	}
	var wg sync.WaitGroup
	for g := range senders {
		wg.Go(func() {
			deadline := time.NewTimer(waitTimeout)
			defer deadline.Stop()
			for i := range uint64(perSender) {
				if err := src.Send(sink.Address(), Envelope{Target: PIDRef{sink.Address(), "sink"}, Sender: PIDRef{src.Address(), fmt.Sprintf("g%d", g)}, Message: ping(i)}); err != nil {
					t.Errorf("send: %v", err)
					return
				}
				if i%burst != burst-1 {
					continue
				}
				for seq := uint64(0); seq != i; {
					select {
					case seq = <-answered[g]:
					case <-deadline.C:
						t.Errorf("g%d: no answer to %d", g, i)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	rs.waitUntil(t, "all envelopes", func(r *recorder) bool { return len(r.delivered) == senders*perSender })
	rsrc.waitUntil(t, "all answers", func(r *recorder) bool { return len(r.delivered) == senders*perSender })
	mu.Lock()
	defer mu.Unlock()
	assert.Empty(t, bad)
	assert.Len(t, next, senders)
	for k, v := range next {
		assert.Equal(t, uint64(perSender), v, k)
	}
	direct, sent := src.stats.directWrites.Load(), src.Stats().EnvelopesSent
	assert.Positive(t, direct, "direct writes")
	assert.Less(t, direct, sent, "some envelopes went through the queue (sent %d)", sent)
}

// TestDirectWriteBoundedWhenPeerStopsReading: a peer whose reader stops
// (its Deliver hook blocks) lets the socket buffers fill; a sender's direct
// write then never waits WriteTimeout (a minute here) for room. Over TCP
// it does not wait at all: the rest of its frame is handed to the writer
// goroutine, Send returns nil, and once the peer reads again every
// envelope arrives, in order, none reported undelivered. Over TLS, where a
// timed-out write cannot be resumed, Send returns ErrConnectionLost after
// directWait, the envelope is reported Undelivered and the connection
// closes.
func TestDirectWriteBoundedWhenPeerStopsReading(t *testing.T) {
	ca := newTestCA(t)
	for _, tc := range []struct {
		name string
		cfg  func() Config
		tls  bool
	}{
		{"tcp", testConfig, false},
		{"tls", func() Config { return mtlsConfig(t, ca, "127.0.0.1") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A round whose Send the writer goroutine took (it held the
			// connection at that moment, which a loaded machine makes
			// likely) proves nothing: that envelope waits behind the full
			// socket in the queue, and so does every later one. Such a
			// round is run again on new nodes.
			for range 5 {
				if directStall(t, tc.cfg(), tc.tls) {
					return
				}
			}
			t.Fatal("in every attempt a Send went through the queue before a direct write met the full socket buffer")
		})
	}
}

// directStall is one attempt of TestDirectWriteBoundedWhenPeerStopsReading;
// false when a Send was queued instead of written directly (inconclusive).
func directStall(t *testing.T, cfg Config, tlsMode bool) bool {
	cfg.WriteTimeout = time.Minute // a sender held for it fails the bound below
	cfg.HeartbeatTimeout = time.Minute
	cfg.HeartbeatInterval = 20 * time.Second // no heartbeats in the way
	a, ra := startNode(t, cfg)
	p, rp := startNode(t, cfg)
	stalled, resume := make(chan struct{}), make(chan struct{})
	var stallOnce sync.Once
	rp.onDeliver = func(Peer, Envelope) {
		stallOnce.Do(func() {
			close(stalled)
			<-resume // p's reader stops here: nothing more is read
		})
	}
	resumed := sync.OnceFunc(func() { close(resume) })
	t.Cleanup(resumed)
	got := make(chan struct{}, 1)
	ra.onDeliver = func(Peer, Envelope) { got <- struct{}{} }

	bigID := strings.Repeat("x", 3000) // a frame of about 3 KiB: a direct write
	env := func(i int) Envelope {
		return Envelope{Target: PIDRef{p.Address(), fmt.Sprintf("%06d%s", i, bigID)}, Message: ping(uint64(i))}
	}
	require.NoError(t, a.Send(p.Address(), env(0)))
	select {
	case <-stalled:
	case <-time.After(waitTimeout):
		t.Fatal("p never delivered the first envelope")
	}
	// The writer goroutine wrote it; once it has also released it
	// (a busy test can keep it from running for a while), nothing is
	// queued and the sends below can be direct writes.
	require.Eventually(t, func() bool { return a.Stats().EnvelopesSent == 1 }, waitTimeout, time.Millisecond)
	// Small socket buffers: they fill after a few dozen frames.
	shrink := func(n *Node, peer string, set func(*net.TCPConn)) {
		n.mu.Lock()
		ep := n.endpoints[peer]
		n.mu.Unlock()
		require.NotNil(t, ep)
		raw := ep.current().raw
		if tc, ok := raw.(*tls.Conn); ok {
			raw = tc.NetConn()
		}
		set(raw.(*net.TCPConn))
	}
	shrink(a, p.Address(), func(c *net.TCPConn) { require.NoError(t, c.SetWriteBuffer(4096)) })
	shrink(p, a.Address(), func(c *net.TCPConn) { require.NoError(t, c.SetReadBuffer(64<<10)) })

	// Each round: a frame from p (so that a may write directly), then
	// a Send from a, which must return well before WriteTimeout.
	sent, handedOff := 1, false
	for i := 1; i < 20000 && !handedOff; i++ {
		require.NoError(t, p.Send(a.Address(), Envelope{Target: PIDRef{a.Address(), "a"}, Message: &Pong{Seq: uint64(i)}}))
		select {
		case <-got:
		case <-time.After(waitTimeout):
			t.Fatal("a never got p's frame")
		}
		direct := a.stats.directWrites.Load()
		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- a.Send(p.Address(), env(i)) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("Send %d blocked by a peer that stopped reading", i)
		}
		elapsed := time.Since(start)
		require.Less(t, elapsed, 3*time.Second, "Send %d", i)
		if err == nil && a.stats.directWrites.Load() == direct {
			resumed() // queued: let everything through, and try again
			return false
		}
		if tlsMode {
			if err == nil {
				sent++
				continue
			}
			require.ErrorIs(t, err, ErrConnectionLost)
			ra.waitUntil(t, "the envelope reported undelivered", func(r *recorder) bool {
				for _, u := range r.undelivered {
					if u.Envelope.Message.(*Ping).Seq == uint64(i) {
						return true
					}
				}
				return false
			})
			ra.waitEvent(t, EventDisconnected, ErrConnectionLost)
			return true
		}
		require.NoError(t, err)
		sent++
		handedOff = a.stats.directHandoffs.Load() > 0
	}
	require.True(t, handedOff, "no direct write met a full socket buffer")
	ra.mu.Lock()
	require.Empty(t, ra.undelivered)
	ra.mu.Unlock()
	resumed()
	rp.waitUntil(t, "every envelope", func(r *recorder) bool { return len(r.delivered) >= sent })
	rp.mu.Lock()
	defer rp.mu.Unlock()
	require.Len(t, rp.delivered, sent)
	for i, d := range rp.delivered {
		require.Equal(t, uint64(i), d.Env.Message.(*Ping).Seq)
	}
	return true
}

// TestDirectWriteAfterWriterDeadlinePassed: a direct write on a TCP socket
// sets no deadline of its own, so the one the writer goroutine set for its
// last write (WriteTimeout, 20 ms here) passes while only direct writes
// happen. The direct write that meets it hands its frame to the writer
// goroutine, which writes it under a new deadline: the connection stays
// up and nothing is lost.
func TestDirectWriteAfterWriterDeadlinePassed(t *testing.T) {
	cfg := testConfig()
	cfg.WriteTimeout = 20 * time.Millisecond
	cfg.HeartbeatInterval = 5 * time.Second // no heartbeats: only direct writes after the first
	a, ra := startNode(t, cfg)
	b, rb := startNode(t, cfg)
	got := echoPongs(t, b, ra, rb)
	deadline := time.NewTimer(waitTimeout)
	defer deadline.Stop()
	i := uint64(0)
	for ; a.stats.directHandoffs.Load() == 0; i++ {
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "echo"}, Sender: PIDRef{a.Address(), "asker"}, Message: ping(i)}))
		select {
		case seq := <-got:
			require.Equal(t, i, seq)
		case <-deadline.C:
			t.Fatalf("round trip %d timed out (direct writes %d)", i, a.stats.directWrites.Load())
		}
	}
	assert.Zero(t, a.Stats().Undelivered)
	assert.Zero(t, b.Stats().Undelivered)
	for _, e := range ra.snapshotEvents() {
		assert.NotEqual(t, EventDisconnected, e.Kind, "%v", e)
	}
	t.Logf("%d round trips, %d direct writes", i, a.stats.directWrites.Load())
}

// closesOnEncode calls onEncode (when set) as its codec encodes it: a
// test's way into a direct write between its look at the connection and
// its write, where only the codec runs.
type closesOnEncode struct {
	N        int
	onEncode func()
}

func (m *closesOnEncode) MarshalJSON() ([]byte, error) {
	if m.onEncode != nil {
		m.onEncode()
	}
	return json.Marshal(struct{ N int }{m.N})
}

// TestDirectWriteMeetsClosedConnection: the connection closes after a
// direct write found it open and before it writes (here the envelope's own
// codec closes it, as the connection's reader may on reading the end of
// the stream). Nothing was written, so the envelope goes to the queue, as
// if the close had been seen first: Send returns nil and the envelope
// reaches the peer on the next connection, nothing reported undelivered.
func TestDirectWriteMeetsClosedConnection(t *testing.T) {
	ser := NewSerializers()
	require.NoError(t, RegisterJSON[*closesOnEncode](ser, "test.ClosesOnEncode"))
	cfg := testConfig()
	cfg.Serializers = ser
	cfg.HeartbeatInterval = 20 * time.Second // no ping holds the write lock
	cfg.HeartbeatTimeout = time.Minute
	a, ra := startNode(t, cfg)
	b, rb := startNode(t, cfg)
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: ping(0)}))
	rb.waitUntil(t, "the first delivery", func(r *recorder) bool { return len(r.delivered) == 1 })
	a.mu.Lock()
	ep := a.endpoints[b.Address()]
	a.mu.Unlock()
	require.NotNil(t, ep)
	// Nothing queued or held any more, and the writer goroutine, which
	// released the first envelope under the write lock, has let go of it:
	// the next Send writes directly (the first direct write of a
	// connection needs no frame in), where a TryLock that failed would
	// leave it to the writer goroutine.
	require.Eventually(t, func() bool { return ep.q.pending() == 0 }, waitTimeout, time.Millisecond)
	ep.w.mu.Lock()
	ep.w.mu.Unlock() // empty: only waits for the writer goroutine to unlock
	c := ep.current()
	require.NotNil(t, c)

	defer func() {
		if t.Failed() {
			ra.mu.Lock()
			t.Logf("a: undelivered %v; events %v; direct writes %d", ra.undelivered, ra.events, a.stats.directWrites.Load())
			ra.mu.Unlock()
		}
	}()
	var closed sync.Once
	closer := func() { closed.Do(func() { a.closeConn(c, errors.New("test: closed under a direct write")) }) }
	msg := &closesOnEncode{N: 1, onEncode: closer}
	require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "x"}, Message: msg}))
	rb.waitUntil(t, "the envelope, on the next connection", func(r *recorder) bool { return len(r.delivered) == 2 })
	assert.Equal(t, &closesOnEncode{N: 1}, rb.delivered[1].Env.Message)
	assert.True(t, c.isClosed())
	assert.NotSame(t, c, ep.current(), "a new connection")
	ra.mu.Lock()
	defer ra.mu.Unlock()
	assert.Empty(t, ra.undelivered)
}
