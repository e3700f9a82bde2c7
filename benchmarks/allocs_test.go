package benchmarks

import (
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	fraktor "github.com/fraktor-go/fraktor/actor"
)

// maxAllocsPerMessage bounds the allocations a message adds to a run in
// TestMessagePathAllocs: one in twenty. A path that allocates per message
// adds 1 or more; the runs' fixed costs (actors, and an unbounded
// mailbox's segments while a burst is queued) do not grow with n.
const maxAllocsPerMessage = 0.05

// mallocsPerMessage runs run at n and at 10n (after one warm-up run at n)
// and returns the heap allocations the extra 9n messages added, per
// message. go test's allocs/op is a run's allocations divided by b.N and
// rounded down, so a path that allocated once every two messages would
// still print 0 allocs/op; this reads the allocations the messages add.
func mallocsPerMessage(t *testing.T, n int, run func(n int) (int, error)) float64 {
	t.Helper()
	measure := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := run(n)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.Equal(t, n, got)
		return after.Mallocs - before.Mallocs
	}
	measure(n)
	small, large := measure(n), measure(10*n)
	if large < small {
		return 0
	}
	return float64(large-small) / float64(9*n)
}

// TestMessagePathAllocs pins what docs/benchmarks.md reports as 0 allocs/op
// for fraktor-go's messaging workloads: sending, queueing, scheduling and
// receiving a message allocates nothing beyond the message (and these
// workloads reuse their messages). Each case fails if a message allocates
// as often as once in twenty.
func TestMessagePathAllocs(t *testing.T) {
	const n = 20_000
	lat := make([]time.Duration, 10*n)
	type workload struct {
		name string
		run  func(sys *fraktor.System) func(n int) (int, error)
	}
	for _, w := range []workload{
		{"Tell", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return tellFraktor(sys, n) }
		}},
		{"TellPairs", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return tellPairsFraktor(sys, n) }
		}},
		{"PingPong", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return pingPongFraktor(sys, n, lat) }
		}},
		{"SavinaCounting", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return countingFraktor(sys, n) }
		}},
		{"SavinaForkJoin", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return forkJoinFraktor(sys, n) }
		}},
		{"SavinaThreadRing", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return threadRingFraktor(sys, n) }
		}},
		{"SavinaBig", func(sys *fraktor.System) func(int) (int, error) {
			return func(n int) (int, error) { return bigFraktor(sys, n) }
		}},
	} {
		t.Run(w.name, func(t *testing.T) {
			per := mallocsPerMessage(t, n, w.run(fraktorSys(t)))
			t.Logf("%.5f allocations per message", per)
			require.Less(t, per, maxAllocsPerMessage)
		})
	}
}
