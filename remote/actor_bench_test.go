package remote_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/fraktor-go/fraktor/actor"
)

// BenchmarkRemoteActorOneWay measures actor-level one-way throughput between
// two systems in one process over loopback TCP: Send to a remote PID →
// remote process → serialize → queue → batch → write → read → decode →
// deserialize → Lookup → mailbox → Receive. One sender (the root context);
// at most window messages in flight so the bounded queue never overflows.
//
//	go test ./remote -run '^$' -bench RemoteActor -benchtime 2s
func BenchmarkRemoteActorOneWay(b *testing.B) {
	cases := []struct {
		name string
		msg  any
	}{
		{"json", &Echo{Text: "0123456789abcdef"}},
		{"proto", wrapperspb.String("0123456789abcdef")},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			const window = 1 << 14
			cfg := testConfig(b)
			cfg.OutboundQueueSize = 2 * window
			sysA, _ := startSystem(b, "a", cfg)
			sysB, _ := startSystem(b, "b", cfg)
			var received atomic.Int64
			sink, err := sysB.Root().SpawnNamed(actor.PropsFromFunc(func(c actor.Context) {
				switch c.Message().(type) {
				case *Echo, *wrapperspb.StringValue:
					received.Add(1)
				}
			}), "sink")
			require.NoError(b, err)
			target := remotePID(sink)
			sysA.Root().Send(target, tc.msg) // connect before timing
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
				sysA.Root().Send(target, tc.msg)
				sent++
			}
			for received.Load() < sent {
				runtime.Gosched()
			}
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(sent)/elapsed.Seconds(), "msgs/s")
			require.Zero(b, sysA.DeadLetters()+sysB.DeadLetters())
		})
	}
}

// BenchmarkRemoteActorRequestRTT measures one request/response round trip
// between two systems over loopback TCP with actor.Request (a future on the
// asking side, Respond on the other): ns/op is the round-trip time.
//
//	go test ./remote -run '^$' -bench RemoteActorRequest -benchtime 2s
func BenchmarkRemoteActorRequestRTT(b *testing.B) {
	sysA, _ := startSystem(b, "a", testConfig(b))
	sysB, _ := startSystem(b, "b", testConfig(b))
	echo := remotePID(echoOn(b, sysB, "echo", "b"))
	ctx := b.Context()
	msg := &Echo{Text: "rtt"}
	_, err := actor.Request[*EchoReply](ctx, sysA.Root(), echo, msg)
	require.NoError(b, err)

	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := actor.Request[*EchoReply](ctx, sysA.Root(), echo, msg); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "requests/s")
}
