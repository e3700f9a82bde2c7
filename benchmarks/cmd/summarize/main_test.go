package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const sample = `goos: linux
BenchmarkTell/impl=fraktor-2  	 3177362	        40.00 ns/op	  14321295 msgs/s	      38 B/op	       0 allocs/op
BenchmarkTell/impl=fraktor-2  	 3177362	        60.00 ns/op	  14321295 msgs/s	      38 B/op	       0 allocs/op
BenchmarkTell/impl=fraktor-2  	 3177362	        50.00 ns/op	  14321295 msgs/s	      38 B/op	       0 allocs/op
BenchmarkTell/impl=protoactor-2         	 3266643	        100.0 ns/op	  10248710 msgs/s	      12 B/op	       0 allocs/op
BenchmarkTell/impl=raw-chan-2           	 6611929	        25.00 ns/op	  27249165 msgs/s	       0 B/op	       0 allocs/op
BenchmarkTell/impl=raw-spsc-2           	 1695469	        20.00 ns/op	  6985667 msgs/s	       0 B/op	       0 allocs/op
BenchmarkPingPong/impl=fraktor-2        	  996306	       1000 ns/op	   3342139 msgs/s	       176.0 p50-ns	      2487 p99-ns	      76 B/op	       0 allocs/op
BenchmarkIdleActor/impl=fraktor-2                	       1	1151001423 ns/op	      1445 B/actor	163443040 B/op	  502689 allocs/op
BenchmarkOther-2 	 10	 5 ns/op
PASS
`

func TestParseAndRender(t *testing.T) {
	res, err := parse(strings.NewReader(sample))
	require.NoError(t, err)
	assert.Equal(t, []string{"Tell", "PingPong", "IdleActor"}, res.order)
	assert.Equal(t, []string{"fraktor", "protoactor", "raw-chan", "raw-spsc"}, res.impls["Tell"])
	assert.Len(t, res.values[key{"Tell", "fraktor", "ns/op"}], 3)

	var out strings.Builder
	render(&out, res)
	s := out.String()
	// median 50 ns against 100 ns and the fastest raw (spsc, 20 ns)
	assert.Contains(t, s, "| Tell | 50.0 ns | 100.0 ns | 20.0 ns (spsc) | 0.50× | 2.50× | ≤ 50.0 ns: met |")
	assert.Contains(t, s, "| PingPong | 1.00 µs | — | — | — | — | ≤ 750.0 ns: not met |")
	assert.Contains(t, s, "| PingPong p50 | 176.0 ns |")
	assert.Contains(t, s, "| IdleActor (bytes per idle actor) | 1445 B |")
	assert.NotContains(t, s, "Other")
}

func TestSplitName(t *testing.T) {
	cases := []struct{ in, workload, impl string }{
		{"BenchmarkTell/impl=fraktor-2", "Tell", "fraktor"},
		{"BenchmarkTell/impl=raw-chan", "Tell", "raw-chan"},
		{"BenchmarkX/impl=raw-go-16", "X", "raw-go"},
		{"BenchmarkX/impl=fraktor/size=10-2", "X/size=10-2", "fraktor"},
	}
	for _, tc := range cases {
		t.Run(tc.in, func(t *testing.T) {
			w, im, ok := splitName(tc.in)
			require.True(t, ok)
			assert.Equal(t, tc.workload, w)
			assert.Equal(t, tc.impl, im)
		})
	}
	_, _, ok := splitName("BenchmarkPlain-2")
	assert.False(t, ok)
}

func TestParseRejectsMalformedValue(t *testing.T) {
	_, err := parse(strings.NewReader("BenchmarkTell/impl=fraktor-2 10 abc ns/op\n"))
	require.ErrorIs(t, err, errSyntax)
}

func TestMedian(t *testing.T) {
	m, ok := median([]float64{3, 1, 2, 10})
	require.True(t, ok)
	assert.InDelta(t, 2.5, m, 1e-9)
	_, ok = median(nil)
	assert.False(t, ok)
}
