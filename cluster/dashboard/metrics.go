package dashboard

import (
	"context"
	"math"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// Instrument names of the cluster runtime that the dashboard reads.
const (
	requestDuration = "fraktor.cluster.request.duration"
	requestRetries  = "fraktor.cluster.request.retries"
)

// LatencyBuckets are histogram boundaries, in seconds, fine enough for the
// dashboard's percentiles: a geometric series (×1.5) from 50 µs to about
// 15 s.
func LatencyBuckets() []float64 {
	var b []float64
	for v := 50e-6; v < 20; v *= 1.5 {
		b = append(b, math.Round(v*1e7)/1e7)
	}
	return b
}

// View is a MeterProvider option giving the cluster's request-duration
// histogram the LatencyBuckets boundaries. The SDK's default boundaries
// (0, 5, 10, 25, ... in the instrument's unit, seconds) put every request
// into the first buckets, so percentiles read from them are meaningless.
func View() sdkmetric.Option {
	return sdkmetric.WithView(sdkmetric.NewView(
		sdkmetric.Instrument{Name: requestDuration},
		sdkmetric.Stream{Aggregation: sdkmetric.AggregationExplicitBucketHistogram{Boundaries: LatencyBuckets()}},
	))
}

// sample is one reading of a member's cumulative request metrics.
type sample struct {
	at      time.Time
	ok      bool
	count   uint64
	bounds  []float64
	buckets []uint64
	retries int64
}

// rates are derived from two samples.
type rates struct {
	count    uint64
	perSec   float64
	p50, p99 float64 // seconds
	retries  int64
}

// sampleRates reads the member's metrics and returns the rates over the
// newest full window (at least window long); the window moves on once a
// sample is window past its start.
func (m *member) sampleRates(ctx context.Context, now time.Time, window time.Duration) rates {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rm metricdata.ResourceMetrics
	if err := m.src.Collect(ctx, &rm); err != nil {
		return m.rate
	}
	cur := readSample(&rm, now)
	m.rate.count, m.rate.retries = cur.count, cur.retries
	if !m.base.ok {
		m.base, m.last = cur, cur
		return m.rate
	}
	m.last = cur
	if el := cur.at.Sub(m.base.at); el >= window {
		m.rate.perSec = float64(cur.count-m.base.count) / el.Seconds()
		delta := make([]uint64, len(cur.buckets))
		for i := range cur.buckets {
			delta[i] = cur.buckets[i]
			if i < len(m.base.buckets) {
				delta[i] -= m.base.buckets[i]
			}
		}
		m.rate.p50 = percentile(cur.bounds, delta, 0.50)
		m.rate.p99 = percentile(cur.bounds, delta, 0.99)
		m.base = cur
	}
	return m.rate
}

func readSample(rm *metricdata.ResourceMetrics, now time.Time) sample {
	s := sample{at: now, ok: true}
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch mt.Name {
			case requestDuration:
				h, ok := mt.Data.(metricdata.Histogram[float64])
				if !ok {
					continue
				}
				for _, dp := range h.DataPoints {
					s.count += dp.Count
					if s.bounds == nil {
						s.bounds = dp.Bounds
						s.buckets = make([]uint64, len(dp.BucketCounts))
					}
					for i, n := range dp.BucketCounts {
						if i < len(s.buckets) {
							s.buckets[i] += n
						}
					}
				}
			case requestRetries:
				if c, ok := mt.Data.(metricdata.Sum[int64]); ok {
					for _, dp := range c.DataPoints {
						s.retries += dp.Value
					}
				}
			}
		}
	}
	return s
}

// percentile estimates the q-quantile from bucket counts by linear
// interpolation inside the bucket that holds it; 0 without data. Bucket i
// holds (bounds[i-1], bounds[i]]; the last is unbounded and reads as its
// lower bound.
func percentile(bounds []float64, counts []uint64, q float64) float64 {
	var total uint64
	for _, n := range counts {
		total += n
	}
	if total == 0 || len(bounds) == 0 {
		return 0
	}
	target := q * float64(total)
	var cum float64
	for i, n := range counts {
		if n == 0 {
			continue
		}
		if cum+float64(n) >= target {
			lo := 0.0
			if i > 0 {
				lo = bounds[i-1]
			}
			if i >= len(bounds) {
				return lo
			}
			return lo + (bounds[i]-lo)*(target-cum)/float64(n)
		}
		cum += float64(n)
	}
	return bounds[len(bounds)-1]
}
