package middleware_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"

	"github.com/fraktor-go/fraktor/scheduler"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

var systemAttr = attribute.String("fraktor.system", "shop")

func newTelemetry(t *testing.T, clock scheduler.Clock) (*middleware.Telemetry, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	tel, err := middleware.NewTelemetry(mp, clock, middleware.WithAttributes(systemAttr))
	require.NoError(t, err)
	return tel, reader
}

// collect returns the metrics of the reader by name.
func collect(t *testing.T, reader *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		assert.Equal(t, "github.com/fraktor-go/fraktor/scheduler/middleware", sm.Scope.Name)
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

func counter(points ...metricdata.DataPoint[int64]) metricdata.Sum[int64] {
	return metricdata.Sum[int64]{DataPoints: points, Temporality: metricdata.CumulativeTemporality, IsMonotonic: true}
}

func point(v int64, kv ...attribute.KeyValue) metricdata.DataPoint[int64] {
	return metricdata.DataPoint[int64]{Attributes: attribute.NewSet(kv...), Value: v}
}

func reasonAttr(r string) attribute.KeyValue {
	return attribute.String(middleware.AttrSuspendReason, r)
}

// S7: one batch records its duration, dequeued count, and suspend or failure.
func TestTelemetry_RecordsPerBatch(t *testing.T) {
	tests := []struct {
		name      string
		result    scheduler.InvokeResult
		processed int
		suspends  []metricdata.DataPoint[int64]
		failures  int64
	}{
		{"completed", scheduler.Completed(true), 5, nil, 0},
		{"yielded", scheduler.Yielded(), 300, nil, 0},
		{"suspended by rate limit", scheduler.Suspended(scheduler.ReasonRateLimit, scheduler.ResumeAfter(time.Second)), 0,
			[]metricdata.DataPoint[int64]{point(1, systemAttr, reasonAttr("rate_limit"))}, 0},
		{"suspended actor", scheduler.Suspended(scheduler.ReasonActor, scheduler.ResumeExternal()), 2,
			[]metricdata.DataPoint[int64]{point(1, systemAttr, reasonAttr("actor"))}, 0},
		{"suspended backpressure", scheduler.Suspended(scheduler.ReasonBackpressure, scheduler.ResumeAfter(time.Millisecond)), 0,
			[]metricdata.DataPoint[int64]{point(1, systemAttr, reasonAttr("backpressure"))}, 0},
		{"suspended unknown reason", scheduler.Suspended(scheduler.SuspendReason(9), scheduler.ResumeExternal()), 0,
			[]metricdata.DataPoint[int64]{point(1, systemAttr, reasonAttr("SuspendReason(9)"))}, 0},
		{"failed", scheduler.Failed(errActor, time.Second), 1, nil, 1},
		{"stopped", scheduler.Stopped(), 0, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := scheduler.NewManualClock(epoch)
			tel, reader := newTelemetry(t, clock)
			var ic scheduler.InvokeContext
			ic.Reset(7, 300, clock.Now())
			require.Equal(t, scheduler.Continue, tel.BeforeInvoke(&ic))
			clock.Advance(3 * time.Millisecond)
			ic.Processed = tt.processed
			tel.AfterInvoke(&ic, tt.result)

			ms := collect(t, reader)
			d, ok := ms[middleware.MetricInvokeDuration]
			require.True(t, ok)
			assert.Equal(t, "s", d.Unit)
			h := d.Data.(metricdata.Histogram[float64])
			require.Len(t, h.DataPoints, 1)
			assert.Equal(t, uint64(1), h.DataPoints[0].Count)
			assert.InDelta(t, 0.003, h.DataPoints[0].Sum, 1e-12)
			assert.Equal(t, attribute.NewSet(systemAttr), h.DataPoints[0].Attributes)

			if tt.processed > 0 {
				metricdatatest.AssertAggregationsEqual(t, counter(point(int64(tt.processed), systemAttr)), ms[middleware.MetricDequeued].Data, metricdatatest.IgnoreTimestamp())
			} else {
				assert.NotContains(t, ms, middleware.MetricDequeued)
			}
			if tt.suspends != nil {
				metricdatatest.AssertAggregationsEqual(t, counter(tt.suspends...), ms[middleware.MetricSuspends].Data, metricdatatest.IgnoreTimestamp())
			} else {
				assert.NotContains(t, ms, middleware.MetricSuspends)
			}
			if tt.failures > 0 {
				metricdatatest.AssertAggregationsEqual(t, counter(point(tt.failures, systemAttr)), ms[middleware.MetricFailures].Data, metricdatatest.IgnoreTimestamp())
			} else {
				assert.NotContains(t, ms, middleware.MetricFailures)
			}
		})
	}
}

// Telemetry in a chain with RateLimit on the Manual executor: the counters
// agree with what the invoker did.
func TestTelemetry_WithRateLimitOnManualExecutor(t *testing.T) {
	m := newManual(t, 20)
	tel, reader := newTelemetry(t, m.Clock())
	v := newTestInvoker(1, m.Clock(), 1000, tel, newRateLimit(t, 100, 10, m.Clock()))
	v.work = func(n int) { m.Clock().Advance(time.Duration(n) * time.Microsecond) }
	m.Schedule(v)
	m.RunUntilIdle()
	advanceTo(m, epoch.Add(time.Second))
	v.failNext = errActor
	m.Advance(10 * time.Millisecond)
	// The virtual time spent processing while the bucket is full is lost
	// to the burst cap, so a little under 10 + 100 + 1.
	require.InDelta(t, 108, v.processed, 3)

	var suspends int64
	for _, r := range v.results {
		if r.Kind == scheduler.ResultSuspended {
			suspends++
		}
	}
	require.Positive(t, suspends)
	ms := collect(t, reader)
	metricdatatest.AssertAggregationsEqual(t, counter(point(int64(v.processed), systemAttr)), ms[middleware.MetricDequeued].Data, metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertAggregationsEqual(t, counter(point(suspends, systemAttr, reasonAttr("rate_limit"))), ms[middleware.MetricSuspends].Data, metricdatatest.IgnoreTimestamp())
	metricdatatest.AssertAggregationsEqual(t, counter(point(1, systemAttr)), ms[middleware.MetricFailures].Data, metricdatatest.IgnoreTimestamp())
	h := ms[middleware.MetricInvokeDuration].Data.(metricdata.Histogram[float64])
	assert.Equal(t, uint64(len(v.results)), h.DataPoints[0].Count)
	assert.InDelta(t, float64(v.processed)*1e-6, h.DataPoints[0].Sum, 1e-12, "virtual time spent processing")
}

func TestTelemetry_ZeroStartRecordsNoDuration(t *testing.T) {
	tel, reader := newTelemetry(t, scheduler.NewManualClock(epoch))
	var ic scheduler.InvokeContext
	ic.Processed = 1
	tel.AfterInvoke(&ic, scheduler.Completed(false))
	ms := collect(t, reader)
	assert.NotContains(t, ms, middleware.MetricInvokeDuration)
	assert.Contains(t, ms, middleware.MetricDequeued)
}

func TestTelemetry_NilProviderAndClock(t *testing.T) {
	tel, err := middleware.NewTelemetry(nil, nil)
	require.NoError(t, err)
	var ic scheduler.InvokeContext
	ic.Reset(1, 10, time.Now())
	ic.Processed = 3
	tel.AfterInvoke(&ic, scheduler.Failed(errActor, 0))
}

// failingProvider refuses to create one instrument.
type failingProvider struct {
	noop.MeterProvider
	refuse string
}

func (p failingProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return failingMeter{refuse: p.refuse}
}

type failingMeter struct {
	noop.Meter
	refuse string
}

var errRefused = errors.New("instrument refused")

func (m failingMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	if name == m.refuse {
		return nil, errRefused
	}
	return m.Meter.Int64Counter(name, opts...)
}

func (m failingMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	if name == m.refuse {
		return nil, errRefused
	}
	return m.Meter.Float64Histogram(name, opts...)
}

func TestTelemetry_InstrumentError(t *testing.T) {
	for _, name := range []string{middleware.MetricInvokeDuration, middleware.MetricDequeued, middleware.MetricSuspends, middleware.MetricFailures} {
		t.Run(name, func(t *testing.T) {
			_, err := middleware.NewTelemetry(failingProvider{refuse: name}, nil)
			require.ErrorIs(t, err, middleware.ErrInstrument)
			require.ErrorIs(t, err, errRefused)
			assert.Contains(t, err.Error(), name)
		})
	}
}

// nilMeterProvider hands out a nil meter.
type nilMeterProvider struct{ noop.MeterProvider }

func (nilMeterProvider) Meter(string, ...metric.MeterOption) metric.Meter { return nil }

// nilInstrumentMeter creates a nil counter without an error.
type nilInstrumentMeter struct{ noop.Meter }

func (nilInstrumentMeter) Int64Counter(string, ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	return nil, nil
}

type nilInstrumentProvider struct{ noop.MeterProvider }

func (nilInstrumentProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return nilInstrumentMeter{}
}

// A broken provider is refused with ErrInstrument: a typed-nil SDK provider
// (its Meter panics), a nil meter, a nil instrument. It used to panic in
// NewTelemetry, or, for a nil instrument, in every AfterInvoke.
func TestTelemetry_BrokenProvider(t *testing.T) {
	var typedNil *sdkmetric.MeterProvider
	for name, mp := range map[string]metric.MeterProvider{
		"typed nil SDK provider": typedNil,
		"nil meter":              nilMeterProvider{},
		"nil instrument":         nilInstrumentProvider{},
	} {
		t.Run(name, func(t *testing.T) {
			var tel *middleware.Telemetry
			var err error
			require.NotPanics(t, func() { tel, err = middleware.NewTelemetry(mp, nil) })
			require.ErrorIs(t, err, middleware.ErrInstrument)
			assert.Nil(t, tel)
			assert.Nil(t, middleware.KindTelemetry()("kind", mp, nil), "the kind gets no middleware")
		})
	}
}
