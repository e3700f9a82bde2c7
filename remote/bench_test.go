package remote

import (
	"context"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/actor"
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

// BenchmarkReceiveBatch measures the receiving side of one envelopes frame
// per op without a socket, as the connection's reader delivers it
// (deliverBatch): the batch decoder, the payload's protobuf decoding, the
// Deliver hook (a no-op) and the yield after the frame, for a frame of 128
// envelopes of a 64-byte wrapperspb.BytesValue to one target, as a one-way
// stream sends them. ns/op / 128 is the cost of one received envelope, allocations
// (the decoded message: the struct and its bytes) and GC included.
//
//	go test ./remote -run '^$' -bench ReceiveBatch -benchmem
func BenchmarkReceiveBatch(b *testing.B) {
	const perFrame = 128
	ser, codec, _, payload := bytesCodec(b)
	cfg := DefaultConfig()
	cfg.Serializers = ser
	var got int
	n, err := NewNode(cfg, Hooks{Deliver: func(Peer, Envelope) { got++ }})
	require.NoError(b, err)
	const local, peer = "127.0.0.1:1", "127.0.0.1:2"
	enc := newEnvelopeEncoder(peer, local)
	var body []byte
	for range perFrame {
		w := wireEnvelope{target: PIDRef{local, "sink"}, serializer: codec.ser, typeName: codec.name, payload: payload}
		body = enc.append(body, &w)
	}
	from := Peer{Address: peer, NodeID: "peer"}
	b.ReportAllocs()
	for b.Loop() {
		dec := newEnvelopeDecoder(local, peer)
		if err := n.deliverBatch(from, dec, body); err != nil {
			b.Fatal(err)
		}
	}
	require.Equal(b, b.N*perFrame, got)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*perFrame), "ns/envelope")
}

// BenchmarkReceiveActor measures what BenchmarkReceiveBatch does, with the
// Remote extension's Deliver hook instead of a no-op: each envelope is
// resolved to a local actor and posted to its mailbox, and the actor,
// running on the system's workers, receives it. Frames of 128 envelopes to
// one target, as a one-way stream sends them; at most window envelopes are
// delivered and not yet received, as the sender's window in the
// two-process benchmark bounds them. ns/envelope is the reader's time per
// envelope with the actor running beside it.
//
//	go test ./remote -run '^$' -bench ReceiveActor -benchmem
func BenchmarkReceiveActor(b *testing.B) {
	const perFrame, window = 128, 8192
	ser, codec, _, payload := bytesCodec(b)
	cfg := testConfig()
	cfg.Serializers = ser
	sys, err := actor.NewSystem(actor.SystemConfig{Name: "rx", Extensions: []actor.ExtensionInstaller{Install(cfg)}})
	require.NoError(b, err)
	b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	r := Get(sys)
	var received atomic.Int64
	_, err = sys.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*wrapperspb.BytesValue); ok {
			received.Add(1)
		}
	}), "sink")
	require.NoError(b, err)

	const peer = "127.0.0.1:2"
	local := r.Address()
	enc := newEnvelopeEncoder(peer, local)
	w := wireEnvelope{target: PIDRef{local, "sink"}, serializer: codec.ser, typeName: codec.name, payload: payload}
	from := Peer{Address: peer, NodeID: "peer"}
	dec := newEnvelopeDecoder(local, peer)
	// The first frame defines the type name; the measured one refers to it.
	require.NoError(b, r.node.deliverBatch(from, dec, enc.append(nil, &w)))
	sent := int64(1)
	var body []byte
	for range perFrame {
		body = enc.append(body, &w)
	}
	b.ReportAllocs()
	for b.Loop() {
		for sent-received.Load() >= window {
			runtime.Gosched()
		}
		if err := r.node.deliverBatch(from, dec, body); err != nil {
			b.Fatal(err)
		}
		sent += perFrame
	}
	for received.Load() < sent {
		runtime.Gosched()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sent), "ns/envelope")
}
