package clusterbench

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var impls = []string{ImplFraktor, ImplProto}

// startCluster starts a cluster of impl stopped by tb's cleanup.
func startCluster(tb testing.TB, impl string, opts Options) Cluster {
	tb.Helper()
	c, err := Start(impl, opts)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), readyLimit)
		defer cancel()
		require.NoError(tb, c.Close(ctx))
	})
	return c
}

func callCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	tb.Cleanup(cancel)
	return ctx
}

// percentiles returns the median and the 99th percentile of lat (sorted
// in place).
func percentiles(lat []time.Duration) (p50, p99 time.Duration) {
	if len(lat) == 0 {
		return 0, 0
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[(len(lat)*99)/100]
}
