package remotebench

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOneWaySendAllocs pins the "0 allocations a message on the sending
// side" that docs/benchmarks.md reports for fraktor-go's RemoteOneWay: it
// reads the allocations of the measuring process (sending, serializing,
// writing, and taking the sink's acknowledgements) that 9n more messages
// add to a run of n, per message. go test's allocs/op rounds a run's
// total divided by b.N down, so it would print 0 for a path that
// allocated once every two messages; this fails at one in twenty.
func TestOneWaySendAllocs(t *testing.T) {
	const n = 2 * Window
	c := startPair(t, ImplFraktor)
	measure := func(n int) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		got, err := c.OneWay(n)
		runtime.ReadMemStats(&after)
		require.NoError(t, err)
		require.Equal(t, n, got)
		return after.Mallocs - before.Mallocs
	}
	measure(n)
	small, large := measure(n), measure(10*n)
	per := 0.0
	if large > small {
		per = float64(large-small) / float64(9*n)
	}
	t.Logf("%.5f allocations per message", per)
	require.Less(t, per, 0.05)
}
