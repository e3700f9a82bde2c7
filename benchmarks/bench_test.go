package benchmarks

import (
	"testing"
	"time"
)

// Messaging benchmarks: ns/op is per message (or round trip).

func BenchmarkTell(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return tellFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return tellProto(sys, n) })
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, tellChan) }},
		impl{implSPSC, func(b *testing.B) { benchMessages(b, tellSPSC) }},
	)
}

func BenchmarkTellPairs(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, atLeast(tellPairs, func(n int) (int, error) { return tellPairsFraktor(sys, n) }))
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, atLeast(tellPairs, func(n int) (int, error) { return tellPairsProto(sys, n) }))
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, atLeast(tellPairs, tellPairsChan)) }},
	)
}

// benchPingPong is benchMessages for a round-trip workload: it also
// reports the p50 and p99 of the individual round trips.
func benchPingPong(b *testing.B, run func(n int, lat []time.Duration) (int, error)) {
	lat := make([]time.Duration, b.N)
	benchMessages(b, func(n int) (int, error) { return run(n, lat) })
	p50, p99 := percentiles(lat)
	b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
}

func BenchmarkPingPong(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchPingPong(b, func(n int, lat []time.Duration) (int, error) { return pingPongFraktor(sys, n, lat) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchPingPong(b, func(n int, lat []time.Duration) (int, error) { return pingPongProto(sys, n, lat) })
		}},
		impl{implChan, func(b *testing.B) { benchPingPong(b, pingPongChan) }},
		impl{implSPSC, func(b *testing.B) { benchPingPong(b, pingPongSPSC) }},
	)
}

func BenchmarkRequest(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return requestFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return requestProto(sys, n) })
		}},
		impl{implChan, func(b *testing.B) { benchMessages(b, requestChan) }},
	)
}

// BenchmarkRequestFuture: Request's workload through
// RequestFuture(pid, msg, 10s).Result(); compare with
// BenchmarkRequest/impl=fraktor in the same run.
func BenchmarkRequestFuture(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return requestFutureFraktor(sys, n) })
		}},
	)
}

// Fan-out/fan-in: ns/op is per message (one request and its answer) with
// FanOutActors actors; p50-ns and p99-ns are the round trips of every
// message, each queued behind the rest of its round.
func BenchmarkFanOut(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchPingPong(b, func(n int, lat []time.Duration) (int, error) { return fanOutFraktor(sys, FanOutActors, n, lat) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchPingPong(b, func(n int, lat []time.Duration) (int, error) { return fanOutProto(sys, FanOutActors, n, lat) })
		}},
		impl{implGo, func(b *testing.B) {
			benchPingPong(b, func(n int, lat []time.Duration) (int, error) { return fanOutGo(FanOutActors, n, lat) })
		}},
	)
}

// Spawn+stop: ns/op is per actor life.

func BenchmarkSpawnStop(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return spawnStopFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return spawnStopProto(sys, n) })
		}},
		impl{implGo, func(b *testing.B) { benchMessages(b, spawnStopGo) }},
	)
}

func BenchmarkSpawnStopSync(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchMessages(b, func(n int) (int, error) { return spawnStopSyncFraktor(sys, n) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchMessages(b, func(n int) (int, error) { return spawnStopSyncProto(sys, n) })
		}},
		impl{implGo, func(b *testing.B) { benchMessages(b, spawnStopSyncGo) }},
	)
}

// SkyNet: ns/op is one whole tree (1,111,111 actors at depth 6; depth 5
// with BENCH_QUICK).

func skynetBenchDepth() int {
	if quick() {
		return 5
	}
	return 6
}

func benchSkynet(b *testing.B, run func(depth int) (int64, error)) {
	depth := skynetBenchDepth()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		sum, err := run(depth)
		if err != nil {
			b.Fatal(err)
		}
		if sum != skynetSum(depth) {
			b.Fatalf("skynet sum %d, want %d", sum, skynetSum(depth))
		}
	}
	b.StopTimer()
	actors := 0
	for d := range depth + 1 {
		actors += int(skynetSize(d))
	}
	b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N)/float64(actors), "ns/actor")
}

func BenchmarkSkyNet(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchSkynet(b, func(d int) (int64, error) { return skynetFraktor(sys, d) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchSkynet(b, func(d int) (int64, error) { return skynetProto(sys, d) })
		}},
		impl{implGo, func(b *testing.B) { benchSkynet(b, skynetGo) }},
	)
}

// Bytes per idle actor: ns/op is spawning, messaging and stopping
// idleActors actors; the figure of interest is the B/actor metric.

const idleActors = 100_000

func benchIdle(b *testing.B, run func(k int) (int, float64, error)) {
	b.ReportAllocs()
	b.ResetTimer()
	var sum float64
	for range b.N {
		got, per, err := run(idleActors)
		if err != nil {
			b.Fatal(err)
		}
		if got != idleActors {
			b.Fatalf("%d actors handled their message, want %d", got, idleActors)
		}
		sum += per
	}
	b.ReportMetric(sum/float64(b.N), "B/actor")
}

func BenchmarkIdleActor(b *testing.B) {
	benchImpls(b,
		impl{implFraktor, func(b *testing.B) {
			sys := fraktorSys(b)
			benchIdle(b, func(k int) (int, float64, error) { return idleFraktor(sys, k) })
		}},
		impl{implProto, func(b *testing.B) {
			sys := protoSys(b)
			benchIdle(b, func(k int) (int, float64, error) { return idleProto(sys, k) })
		}},
		impl{implGo, func(b *testing.B) { benchIdle(b, idleGo) }},
	)
}
