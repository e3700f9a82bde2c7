package benchmarks

import (
	"os"
	"testing"

	proto "github.com/asynkron/protoactor-go/actor"
	"github.com/stretchr/testify/require"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// fraktorSys starts a fraktor-go system that tb's cleanup shuts down.
func fraktorSys(tb testing.TB) *fraktor.System {
	tb.Helper()
	sys, err := newFraktor()
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, stopFraktor(sys)) })
	return sys
}

// protoSys starts a protoactor-go system that tb's cleanup shuts down.
func protoSys(tb testing.TB) *proto.ActorSystem {
	tb.Helper()
	sys := newProto()
	tb.Cleanup(sys.Shutdown)
	return sys
}

// quick reports whether BENCH_QUICK asks for the short suite.
func quick() bool { return os.Getenv("BENCH_QUICK") != "" }

// benchMessages times one run of a workload of b.N messages (or hops,
// meetings, round trips), checks it returned want(b.N) and reports the
// rate as msgs/s.
func benchMessages(b *testing.B, run func(n int) (int, error)) {
	b.Helper()
	b.ReportAllocs()
	b.ResetTimer()
	got, err := run(b.N)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if got != b.N {
		b.Fatalf("workload returned %d, want %d", got, b.N)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// benchImpls runs one sub-benchmark per implementation, named impl=NAME
// so benchstat can pivot on it (-col /impl).
func benchImpls(b *testing.B, impls ...impl) {
	for _, im := range impls {
		b.Run("impl="+im.name, im.run)
	}
}

type impl struct {
	name string
	run  func(b *testing.B)
}

// The implementation names shared by the benchmarks and the summary.
const (
	implFraktor = "fraktor"
	implProto   = "protoactor"
	implChan    = "raw-chan"
	implSPSC    = "raw-spsc"
	implGo      = "raw-go"
)
