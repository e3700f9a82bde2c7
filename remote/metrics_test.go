package remote

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/internal/testnet"
	"github.com/fraktor-go/fraktor/scheduler"
)

// remoteInstruments are the instruments a Node publishes, as documented in
// docs/observability.md: name → unit and whether the sum is monotonic.
var remoteInstruments = map[string]struct {
	unit      string
	monotonic bool
}{
	"fraktor.remote.envelopes.sent":             {"{envelope}", true},
	"fraktor.remote.envelopes.received":         {"{envelope}", true},
	"fraktor.remote.frames.sent":                {"{frame}", true},
	"fraktor.remote.frames.received":            {"{frame}", true},
	"fraktor.remote.envelopes.undelivered":      {"{envelope}", true},
	"fraktor.remote.envelopes.queue_full":       {"{envelope}", true},
	"fraktor.remote.envelopes.answers_dropped":  {"{envelope}", true},
	"fraktor.remote.handshakes.refused":         {"{handshake}", true},
	"fraktor.remote.handshakes.duplicate":       {"{handshake}", true},
	"fraktor.remote.handshakes.inbound_refused": {"{handshake}", true},
	"fraktor.remote.protocol_errors":            {"{connection}", true},
	"fraktor.remote.dials.deferred":             {"{dial}", true},
	"fraktor.remote.watches.refused":            {"{watch}", true},
	"fraktor.remote.watches.refused_by_peers":   {"{watch}", true},
	"fraktor.remote.future_answers.unmatched":   {"{envelope}", true},
	"fraktor.remote.spawns.refused":             {"{spawn}", true},
	"fraktor.remote.backlog.refused":            {"{message}", true},
	"fraktor.remote.queue.usage":                {"By", false},
	"fraktor.remote.connections.open":           {"{connection}", false},
	"fraktor.remote.connections.inbound":        {"{connection}", false},
	"fraktor.remote.endpoints":                  {"{endpoint}", false},
}

// statsValues is what each instrument must report for st, written out
// field by field (not from the production table).
func statsValues(st Stats) map[string]int64 {
	return map[string]int64{
		"fraktor.remote.envelopes.sent":             int64(st.EnvelopesSent),
		"fraktor.remote.envelopes.received":         int64(st.EnvelopesReceived),
		"fraktor.remote.frames.sent":                int64(st.FramesSent),
		"fraktor.remote.frames.received":            int64(st.FramesReceived),
		"fraktor.remote.envelopes.undelivered":      int64(st.Undelivered),
		"fraktor.remote.envelopes.queue_full":       int64(st.QueueFull),
		"fraktor.remote.envelopes.answers_dropped":  int64(st.AnswersDropped),
		"fraktor.remote.handshakes.refused":         int64(st.HandshakesRefused),
		"fraktor.remote.handshakes.duplicate":       int64(st.HandshakesDuplicate),
		"fraktor.remote.handshakes.inbound_refused": int64(st.InboundRefused),
		"fraktor.remote.protocol_errors":            int64(st.ProtocolErrors),
		"fraktor.remote.dials.deferred":             int64(st.DialsDeferred),
		"fraktor.remote.watches.refused":            int64(st.WatchesRefused),
		"fraktor.remote.watches.refused_by_peers":   int64(st.WatchesRefusedByPeers),
		"fraktor.remote.future_answers.unmatched":   int64(st.FutureAnswersUnmatched),
		"fraktor.remote.spawns.refused":             int64(st.SpawnsRefused),
		"fraktor.remote.backlog.refused":            int64(st.BacklogRefused),
		"fraktor.remote.queue.usage":                st.QueuedBytes,
		"fraktor.remote.connections.open":           st.Connections,
		"fraktor.remote.connections.inbound":        st.Inbound,
		"fraktor.remote.endpoints":                  int64(st.Endpoints),
	}
}

// sumValues adds the values of several nodes, as a shared provider does.
func sumValues(vs ...map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for _, v := range vs {
		for k, x := range v {
			out[k] += x
		}
	}
	return out
}

// meterProvider is an SDK provider read by a ManualReader, shut down when
// the test ends.
func meterProvider(t testing.TB) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	return reader, mp
}

// collectRemote collects reader and returns the instruments of the remote
// meter, by name; it checks each one's kind, unit and description, and
// that its one data point has no attributes.
func collectRemote(t testing.TB, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != MeterName {
			continue
		}
		for _, m := range sm.Metrics {
			want, ok := remoteInstruments[m.Name]
			require.True(t, ok, "undocumented instrument %s", m.Name)
			assert.Equal(t, want.unit, m.Unit, m.Name)
			assert.NotEmpty(t, m.Description, m.Name)
			sum, ok := m.Data.(metricdata.Sum[int64])
			require.True(t, ok, "%s is a %T, not an int64 sum", m.Name, m.Data)
			assert.Equal(t, want.monotonic, sum.IsMonotonic, m.Name)
			if len(sum.DataPoints) == 0 {
				continue // not observed in this collection
			}
			require.Len(t, sum.DataPoints, 1, m.Name)
			assert.Zero(t, sum.DataPoints[0].Attributes.Len(), "%s has attributes", m.Name)
			out[m.Name] = sum.DataPoints[0].Value
		}
	}
	return out
}

// requireBetween checks that every instrument reports a value between
// what Stats said just before and just after the collection: exactly
// Stats when nothing moves meanwhile.
func requireBetween(t testing.TB, got, before, after map[string]int64) {
	t.Helper()
	require.Len(t, got, len(remoteInstruments), "every instrument is observed: %v", got)
	for name, v := range got {
		lo, hi := min(before[name], after[name]), max(before[name], after[name])
		assert.True(t, lo <= v && v <= hi, "%s = %d, Stats said %d then %d", name, v, before[name], after[name])
	}
}

// metricsConfig is testConfig with a long give-up time: on a ManualClock
// that is not moved, no heartbeat, redial or give-up changes the counters
// while the test compares them.
func metricsConfig() Config {
	c := testConfig()
	c.HeartbeatInterval = time.Hour
	c.HeartbeatTimeout = 2 * time.Hour
	c.GiveUpAfter = time.Hour
	c.OutboundQueueSize = 64
	return c
}

// TestMetricsMatchStats: two nodes on loopback TCP, each with its own
// provider: every instrument reports its Stats field, without attributes,
// and moves when traffic moves (envelopes and frames both ways,
// connections, endpoints, an undeliverable envelope, a full queue and
// the bytes it holds).
func TestMetricsMatchStats(t *testing.T) {
	clock := scheduler.NewManualClock(time.Now())
	readerA, mpA := meterProvider(t)
	readerB, mpB := meterProvider(t)
	a, _ := startNode(t, metricsConfig(), WithClock(clock), WithMeterProvider(mpA))
	b, rb := startNode(t, metricsConfig(), WithClock(clock), WithMeterProvider(mpB))

	check := func(r *sdkmetric.ManualReader, n *Node) map[string]int64 {
		t.Helper()
		before := statsValues(n.Stats())
		got := collectRemote(t, r)
		requireBetween(t, got, before, statsValues(n.Stats()))
		return got
	}
	got := check(readerA, a)
	assert.Zero(t, got["fraktor.remote.envelopes.sent"])
	assert.Zero(t, got["fraktor.remote.endpoints"])

	sendPings := func(from, to *Node, first, count int) {
		t.Helper()
		for i := first; i < first+count; i++ {
			require.NoError(t, from.Send(to.Address(), Envelope{Target: PIDRef{to.Address(), "sink"}, Message: ping(uint64(i))}))
		}
	}
	// The counters move after the fact (see TestNodeExchange): wait for
	// Stats before comparing.
	settle := func(sent, received uint64) {
		t.Helper()
		rb.waitUntil(t, "deliveries", func(r *recorder) bool { return uint64(len(r.delivered)) == received })
		require.Eventually(t, func() bool {
			return a.Stats().EnvelopesSent == sent && b.Stats().EnvelopesReceived == received
		}, waitTimeout, time.Millisecond)
	}
	sendPings(a, b, 0, 10)
	settle(10, 10)
	got = check(readerA, a)
	assert.Equal(t, int64(10), got["fraktor.remote.envelopes.sent"])
	assert.Positive(t, got["fraktor.remote.frames.sent"])
	assert.Equal(t, int64(1), got["fraktor.remote.connections.open"])
	assert.Equal(t, int64(1), got["fraktor.remote.endpoints"])
	got = check(readerB, b)
	assert.Equal(t, int64(10), got["fraktor.remote.envelopes.received"])
	assert.Positive(t, got["fraktor.remote.frames.received"])
	assert.Equal(t, int64(1), got["fraktor.remote.connections.open"])
	assert.Equal(t, int64(1), got["fraktor.remote.connections.inbound"])

	sendPings(a, b, 10, 5)
	settle(15, 15)
	assert.Equal(t, int64(15), check(readerA, a)["fraktor.remote.envelopes.sent"])
	assert.Equal(t, int64(15), check(readerB, b)["fraktor.remote.envelopes.received"])

	// An address where nothing listens: its queue fills (the redial waits
	// on the clock, which does not move) and the envelope beyond it is
	// refused and undelivered.
	closed := testnet.ClosedAddress(t)
	for i := range 64 {
		require.NoError(t, a.Send(closed, Envelope{Target: PIDRef{closed, "x"}, Message: ping(uint64(i))}))
	}
	require.ErrorIs(t, a.Send(closed, Envelope{Target: PIDRef{closed, "x"}, Message: ping(64)}), ErrQueueFull)
	got = check(readerA, a)
	assert.Equal(t, int64(1), got["fraktor.remote.envelopes.queue_full"])
	assert.Equal(t, int64(1), got["fraktor.remote.envelopes.undelivered"])
	assert.Positive(t, got["fraktor.remote.queue.usage"])
	assert.Equal(t, int64(2), got["fraktor.remote.endpoints"])
}

// TestMetricsSharedProviderSumsAndCloseUnregisters: two nodes on one
// provider report the sum of both; once one is closed, only the other's
// values are left (its callback is unregistered), and once both are, the
// remote meter reports nothing.
func TestMetricsSharedProviderSumsAndCloseUnregisters(t *testing.T) {
	clock := scheduler.NewManualClock(time.Now())
	reader, mp := meterProvider(t)
	a, _ := startNode(t, metricsConfig(), WithClock(clock), WithMeterProvider(mp))
	b, rb := startNode(t, metricsConfig(), WithClock(clock), WithMeterProvider(mp))
	for i := range 10 {
		require.NoError(t, a.Send(b.Address(), Envelope{Target: PIDRef{b.Address(), "sink"}, Message: ping(uint64(i))}))
	}
	rb.waitUntil(t, "deliveries", func(r *recorder) bool { return len(r.delivered) == 10 })
	require.Eventually(t, func() bool {
		return a.Stats().EnvelopesSent == 10 && b.Stats().EnvelopesReceived == 10
	}, waitTimeout, time.Millisecond)

	before := sumValues(statsValues(a.Stats()), statsValues(b.Stats()))
	got := collectRemote(t, reader)
	requireBetween(t, got, before, sumValues(statsValues(a.Stats()), statsValues(b.Stats())))
	assert.Equal(t, int64(2), got["fraktor.remote.connections.open"], "one connection seen from each side")
	assert.Equal(t, int64(10), got["fraktor.remote.envelopes.received"])

	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, b.Close(ctx))
	before = statsValues(a.Stats())
	got = collectRemote(t, reader)
	requireBetween(t, got, before, statsValues(a.Stats()))
	assert.Zero(t, got["fraktor.remote.envelopes.received"], "b's counters are gone with its callback")
	assert.Equal(t, int64(10), got["fraktor.remote.envelopes.sent"])

	require.NoError(t, a.Close(ctx))
	assert.Empty(t, collectRemote(t, reader), "no node, no observation")
}

// TestMetricsOffWithoutAProvider: without a provider, with nil, or with the
// no-op provider (what an actor system without a MeterProvider hands the
// remote extension), a Node makes no instrument and registers nothing;
// the last WithMeterProvider wins.
func TestMetricsOffWithoutAProvider(t *testing.T) {
	_, mp := meterProvider(t)
	for name, opts := range map[string][]Option{
		"absent":    nil,
		"nil":       {WithMeterProvider(nil)},
		"noop":      {WithMeterProvider(noop.NewMeterProvider())},
		"nil later": {WithMeterProvider(mp), WithMeterProvider(nil)},
	} {
		t.Run(name, func(t *testing.T) {
			n, _ := startNode(t, testConfig(), opts...)
			assert.Nil(t, n.metrics)
			n.mu.Lock()
			defer n.mu.Unlock()
			assert.Nil(t, n.metricsReg)
		})
	}
	n, _ := startNode(t, testConfig(), WithMeterProvider(noop.NewMeterProvider()), WithMeterProvider(mp))
	assert.NotNil(t, n.metrics)
}

// faultyProvider is a MeterProvider (user code) that fails or panics
// where it is told to; its instruments are no-ops.
type faultyProvider struct {
	noop.MeterProvider
	panicMeter    bool
	registerErr   error
	panicRegister bool
	unregisterErr error
	unregistered  atomic.Int32
}

func (p *faultyProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	if p.panicMeter {
		panic("meter refused")
	}
	return faultyMeter{p: p}
}

type faultyMeter struct {
	noop.Meter
	p *faultyProvider
}

func (m faultyMeter) RegisterCallback(metric.Callback, ...metric.Observable) (metric.Registration, error) {
	if m.p.panicRegister {
		panic("register refused")
	}
	if m.p.registerErr != nil {
		return nil, m.p.registerErr
	}
	return faultyRegistration{p: m.p}, nil
}

type faultyRegistration struct {
	noop.Registration
	p *faultyProvider
}

func (r faultyRegistration) Unregister() error {
	r.p.unregistered.Add(1)
	return r.p.unregisterErr
}

// syncBuffer is a log sink safe for the Node's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMetricsProviderFailures: a MeterProvider that fails or panics fails
// NewNode or Start with an error (never a panic), and a failed Start leaves
// its listener closed; Close unregisters exactly once, and an Unregister
// error is logged, not returned.
func TestMetricsProviderFailures(t *testing.T) {
	_, err := NewNode(testConfig(), Hooks{}, WithMeterProvider(&faultyProvider{panicMeter: true}))
	require.ErrorContains(t, err, "MeterProvider panicked")

	refused := errors.New("callback refused")
	for name, p := range map[string]*faultyProvider{
		"error": {registerErr: refused},
		"panic": {panicRegister: true},
	} {
		t.Run(name, func(t *testing.T) {
			mem := NewMemoryNetwork()
			cfg := testConfig()
			cfg.ListenAddress = "mem:4242"
			n, err := NewNode(cfg, Hooks{}, WithTransport(mem), WithMeterProvider(p))
			require.NoError(t, err)
			err = n.Start(context.Background())
			require.Error(t, err)
			if p.registerErr != nil {
				require.ErrorIs(t, err, refused)
			}
			assert.Empty(t, n.Address(), "not started")
			// The listener was closed: another node can listen there.
			other, err := NewNode(cfg, Hooks{}, WithTransport(mem))
			require.NoError(t, err)
			require.NoError(t, other.Start(context.Background()))
			require.NoError(t, other.Close(context.Background()))
			require.NoError(t, n.Close(context.Background()))
			assert.Zero(t, p.unregistered.Load())
		})
	}

	var logs syncBuffer
	p := &faultyProvider{unregisterErr: errors.New("unregister refused")}
	cfg := testConfig()
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))
	n, _ := startNode(t, cfg, WithMeterProvider(p))
	ctx, cancel := context.WithTimeout(context.Background(), waitTimeout)
	defer cancel()
	require.NoError(t, n.Close(ctx))
	require.NoError(t, n.Close(ctx))
	assert.Equal(t, int32(1), p.unregistered.Load(), "unregistered once")
	assert.Contains(t, logs.String(), "unregister refused")
}

// BenchmarkSendMetrics is BenchmarkTransportThroughput's system-ping case
// without and with the instruments: "on" gives both Nodes an SDK provider
// and collects both every 10 ms (an exporter collects every 10 s to a
// minute) while the sender sends. The Node does no per-message work for
// its instruments, so the two should not differ beyond noise, in ns/op
// and in allocs/op (which count the receiver's decoded messages, both
// Nodes being in this process, and the SDK's some 120 allocations per
// collection).
//
//	go test ./remote -run '^$' -bench SendMetrics -benchmem -count 4 -cpu 2
func BenchmarkSendMetrics(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "metrics=off"
		if on {
			name = "metrics=on"
		}
		b.Run(name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.OutboundQueueSize = 1 << 16
			const window = 1 << 15
			var optsRx, optsTx []Option
			var readers []*sdkmetric.ManualReader
			if on {
				rr, mpr := meterProvider(b)
				rt, mpt := meterProvider(b)
				optsRx, optsTx = []Option{WithMeterProvider(mpr)}, []Option{WithMeterProvider(mpt)}
				readers = []*sdkmetric.ManualReader{rr, rt}
			}
			var received atomic.Int64
			rx, err := NewNode(cfg, Hooks{Deliver: func(Peer, Envelope) { received.Add(1) }}, optsRx...)
			require.NoError(b, err)
			require.NoError(b, rx.Start(b.Context()))
			tx, err := NewNode(cfg, Hooks{}, optsTx...)
			require.NoError(b, err)
			require.NoError(b, tx.Start(b.Context()))
			stop := make(chan struct{})
			var wg sync.WaitGroup
			b.Cleanup(func() {
				close(stop)
				wg.Wait()
				_ = tx.Close(context.Background())
				_ = rx.Close(context.Background())
			})
			if on {
				wg.Go(func() {
					tick := time.NewTicker(10 * time.Millisecond)
					defer tick.Stop()
					var rm metricdata.ResourceMetrics
					for {
						select {
						case <-stop:
							return
						case <-tick.C:
							for _, r := range readers {
								_ = r.Collect(context.Background(), &rm)
							}
						}
					}
				})
			}
			env := Envelope{Target: PIDRef{rx.Address(), "sink"}, Sender: PIDRef{tx.Address(), "src"}, Message: ping(1)}
			require.NoError(b, tx.Send(rx.Address(), env)) // connect before timing
			for received.Load() < 1 {
				runtime.Gosched()
			}
			received.Store(0)

			b.ReportAllocs()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			b.ResetTimer()
			var sent int64
			for b.Loop() {
				for sent-received.Load() >= window {
					runtime.Gosched()
				}
				if err := tx.Send(rx.Address(), env); err != nil {
					b.Fatal(err)
				}
				sent++
			}
			for received.Load() < sent {
				runtime.Gosched()
			}
			b.StopTimer()
			runtime.ReadMemStats(&after)
			// allocs/op is rounded down to an integer: this is not.
			b.ReportMetric(float64(after.Mallocs-before.Mallocs)/float64(sent), "mallocs/msg")
		})
	}
}
