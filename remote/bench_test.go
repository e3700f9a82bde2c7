package remote

import (
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

// BenchmarkTransportThroughput measures raw transport throughput between two
// Nodes over loopback TCP: serialize → queue → batch → write → read → decode
// → deserialize → Deliver. One sender goroutine; at most window envelopes in
// flight so the bounded queue never overflows.
//
//	go test ./remote -run '^$' -bench TransportThroughput -benchtime 2s
func BenchmarkTransportThroughput(b *testing.B) {
	ser := NewSerializers()
	require.NoError(b, ser.RegisterProto(&wrapperspb.StringValue{}))
	cases := []struct {
		name string
		msg  any
	}{
		{"system-ping", ping(1)},
		{"proto-64B", wrapperspb.String(strings.Repeat("x", 64))},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			cfg := DefaultConfig()
			cfg.Serializers = ser
			cfg.OutboundQueueSize = 1 << 16
			const window = 1 << 15
			var received atomic.Int64
			rx, err := NewNode(cfg, Hooks{Deliver: func(Peer, Envelope) { received.Add(1) }})
			require.NoError(b, err)
			require.NoError(b, rx.Start(b.Context()))
			tx, err := NewNode(cfg, Hooks{})
			require.NoError(b, err)
			require.NoError(b, tx.Start(b.Context()))
			b.Cleanup(func() {
				_ = tx.Close(b.Context())
				_ = rx.Close(b.Context())
			})
			env := Envelope{Target: PIDRef{rx.Address(), "sink"}, Sender: PIDRef{tx.Address(), "src"}, Message: tc.msg}
			// Connect before timing.
			require.NoError(b, tx.Send(rx.Address(), env))
			for received.Load() < 1 {
				runtime.Gosched()
			}
			received.Store(0)

			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
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
			elapsed := time.Since(start)
			b.StopTimer()
			st := tx.Stats()
			b.ReportMetric(float64(sent)/elapsed.Seconds(), "envelopes/s")
			b.ReportMetric(float64(st.EnvelopesSent)/float64(max(st.FramesSent, 1)), "envelopes/frame")
		})
	}
}
