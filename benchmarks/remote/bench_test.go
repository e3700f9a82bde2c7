package remotebench

import (
	"testing"
	"time"
)

// The remote benchmarks start one peer process per implementation (per
// -count repetition) and reuse it across the b.N calibration runs. B/op and
// allocs/op count the measuring process only.

// benchRemote runs one sub-benchmark per implementation, named impl=NAME,
// with a client connected to a peer process. The pair is started by the
// first run of the sub-benchmark and stopped by the parent's cleanup:
// testing runs a benchmark's own cleanups after every b.N round.
func benchRemote(b *testing.B, run func(b *testing.B, c Client)) {
	for _, impl := range impls {
		var c Client
		b.Run("impl="+impl, func(sub *testing.B) {
			if c == nil {
				pair, stop, err := newPair(impl)
				if err != nil {
					sub.Fatal(err)
				}
				c = pair
				b.Cleanup(func() {
					if err := stop(); err != nil {
						b.Error(err)
					}
				})
			}
			run(sub, c)
		})
	}
}

// BenchmarkRemoteOneWay: ns/op is per message; msgs/s is the rate at which
// the peer's sink counted them (the timer stops after the last
// acknowledgement came back).
//
//	go test -run '^$' -bench RemoteOneWay -benchtime 2s ./remote/
func BenchmarkRemoteOneWay(b *testing.B) {
	benchRemote(b, func(b *testing.B, c Client) {
		b.ReportAllocs()
		b.ResetTimer()
		got, err := c.OneWay(b.N)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if got != b.N {
			b.Fatalf("sink counted %d, want %d", got, b.N)
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
	})
}

// BenchmarkRemotePingPong: ns/op is the mean round trip; p50-ns and
// p99-ns are percentiles of every round trip of the run; halts/op (on
// Linux with a cpuidle driver) is how often the machine's CPUs halted per
// round trip, which on an idle virtual machine sets the p50 more than the
// code does (cpuHalts).
//
//	go test -run '^$' -bench RemotePingPong -benchtime 2s ./remote/
func BenchmarkRemotePingPong(b *testing.B) {
	benchRemote(b, func(b *testing.B, c Client) {
		lat := make([]time.Duration, b.N)
		b.ReportAllocs()
		halts0, haltsOK := cpuHalts()
		b.ResetTimer()
		got, err := c.PingPong(b.N, lat)
		b.StopTimer()
		halts1, ok := cpuHalts()
		if haltsOK && ok && halts1 >= halts0 {
			b.ReportMetric(float64(halts1-halts0)/float64(b.N), "halts/op")
		}
		if err != nil {
			b.Fatal(err)
		}
		if got != b.N {
			b.Fatalf("got %d replies, want %d", got, b.N)
		}
		p50, p99 := percentiles(lat)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
	})
}

// BenchmarkRemoteMixed: ns/op is per pair of one local round trip and one
// remote one-way message running side by side (Mixed); p50-ns and p99-ns
// are the local round trips' percentiles under the remote stream.
//
//	go test -run '^$' -bench RemoteMixed -benchtime 2s ./remote/
func BenchmarkRemoteMixed(b *testing.B) {
	benchRemote(b, func(b *testing.B, c Client) {
		lat := make([]time.Duration, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		got, err := Mixed(c, b.N, lat)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if got != b.N {
			b.Fatalf("got %d, want %d", got, b.N)
		}
		p50, p99 := percentiles(lat)
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		b.ReportMetric(float64(p50.Nanoseconds()), "p50-ns")
		b.ReportMetric(float64(p99.Nanoseconds()), "p99-ns")
	})
}
