package dashboard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPercentile(t *testing.T) {
	bounds := []float64{1, 2, 4}
	for _, tc := range []struct {
		name   string
		counts []uint64
		q      float64
		want   float64
	}{
		{"empty", []uint64{0, 0, 0, 0}, 0.5, 0},
		{"inside one bucket", []uint64{0, 10, 0, 0}, 0.5, 1.5},
		{"first bucket from zero", []uint64{4, 0, 0, 0}, 0.5, 0.5},
		{"p99 in the upper bucket", []uint64{50, 0, 50, 0}, 0.99, 2 + 2*0.98},
		{"overflow bucket reads its lower bound", []uint64{0, 0, 0, 3}, 0.99, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.InDelta(t, tc.want, percentile(bounds, tc.counts, tc.q), 1e-9)
		})
	}
}
