package actor_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
	"github.com/fraktor-go/fraktor/testkit"
)

func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[sm.Scope.Name+":"+m.Name] = m
		}
	}
	return out
}

func sumFor(t *testing.T, m metricdata.Metrics, kind string) int64 {
	t.Helper()
	s, ok := m.Data.(metricdata.Sum[int64])
	require.True(t, ok, "%s is a sum", m.Name)
	var n int64
	for _, dp := range s.DataPoints {
		if kind == "" {
			n += dp.Value
			continue
		}
		if v, ok := dp.Attributes.Value(actor.AttrActorKind); ok && v.AsString() == kind {
			n += dp.Value
		}
	}
	return n
}

func gaugeValue(t *testing.T, m metricdata.Metrics) int64 {
	t.Helper()
	g, ok := m.Data.(metricdata.Gauge[int64])
	require.True(t, ok, "%s is a gauge", m.Name)
	require.Len(t, g.DataPoints, 1)
	return g.DataPoints[0].Value
}

const actorScope = "github.com/fraktor-go/fraktor/actor:"
const mwScope = "github.com/fraktor-go/fraktor/scheduler/middleware:"

// S7 and the instrument list, read through the SDK's ManualReader.
func TestMetricsInstruments(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	sys := testkit.NewManualSystem(t, func(c *actor.SystemConfig) {
		c.MeterProvider = mp
		c.KindMiddleware = middleware.KindTelemetry()
		c.Throughput = 10
	})

	worker := actor.PropsFromFunc(func(c actor.Context) {
		switch c.Message().(type) {
		case *boom:
			panic("boom")
		case string:
			c.Respond("ok")
		}
	}, actor.WithKind("worker"))
	pids := []*actor.PID{sys.Root().Spawn(worker), sys.Root().Spawn(worker), sys.Root().Spawn(worker)}
	sys.RunUntilIdle()
	sys.Root().Send(pids[0], &boom{}) // fails, restarted by the guardian
	for i := 0; i < 25; i++ {
		sys.Root().Send(pids[1], &msgN{i})
	}
	// Mailbox length is observed as of the last invocation: stop after one batch of 10.
	for sys.Exec.Pending() > 0 && len(sys.TraceOf(pids[1])) < 2 {
		sys.Step()
	}
	m := collect(t, reader)
	assert.Equal(t, int64(15), gaugeValue(t, m[actorScope+actor.MetricMailboxLength]), "25 sent, 10 processed")
	sys.RunUntilIdle()

	f := sys.Root().RequestFuture(pids[2], "q", 0)
	sys.RunUntilIdle()
	_, err := f.Result()
	require.NoError(t, err)
	timeout := sys.Root().RequestFuture(actor.NewPID(actor.LocalAddress, "ghost"), "q", time.Second)
	_, err = timeout.Result()
	require.ErrorIs(t, err, actor.ErrDeadLetter)
	silent := sys.Root().RequestFuture(pids[2], 42, time.Second)
	sys.Advance(time.Second)
	_, err = silent.Result()
	require.ErrorIs(t, err, actor.ErrTimeout)
	sys.Root().Stop(pids[2])
	sys.RunUntilIdle()

	m = collect(t, reader)
	assert.Equal(t, int64(3), sumFor(t, m[actorScope+actor.MetricSpawned], "worker"))
	assert.Equal(t, int64(1), sumFor(t, m[actorScope+actor.MetricActorFailures], "worker"))
	assert.Equal(t, int64(1), sumFor(t, m[actorScope+actor.MetricRestarted], "worker"))
	assert.Equal(t, int64(1), sumFor(t, m[actorScope+actor.MetricStopped], "worker"))
	assert.Equal(t, int64(1), sumFor(t, m[actorScope+actor.MetricDeadLetters], ""))
	assert.Equal(t, int64(3), sumFor(t, m[actorScope+actor.MetricFutureStarted], ""))
	assert.Equal(t, int64(2), sumFor(t, m[actorScope+actor.MetricFutureCompleted], ""), "one answer, one dead letter")
	assert.Equal(t, int64(1), sumFor(t, m[actorScope+actor.MetricFutureTimedOut], ""))
	assert.Equal(t, int64(0), gaugeValue(t, m[actorScope+actor.MetricMailboxLength]))
	// The invoke middleware: boom + 25 + 1 string + 1 int messages dequeued by workers.
	assert.Equal(t, int64(28), sumFor(t, m[mwScope+middleware.MetricDequeued], "worker"))
	h, ok := m[mwScope+middleware.MetricInvokeDuration].Data.(metricdata.Histogram[float64])
	require.True(t, ok)
	var batches uint64
	for _, dp := range h.DataPoints {
		if v, ok := dp.Attributes.Value(actor.AttrActorKind); ok && v.AsString() == "worker" {
			batches += dp.Count
		}
	}
	assert.Greater(t, batches, uint64(5))
}

func TestMetricsWorkerGauges(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	sys := testkit.NewSystem(t, func(c *actor.SystemConfig) { c.MeterProvider = mp; c.Workers = 3 })
	_ = sys
	testkit.Eventually(t, func() bool {
		m := collect(t, reader)
		return gaugeValue(t, m[actorScope+actor.MetricWorkersParked]) == 3 && gaugeValue(t, m[actorScope+actor.MetricWorkersBusy]) == 0
	}, 0, "an idle system parks all its workers")
}

// With a real SDK provider and invoke metrics on, the tell path still
// allocates nothing per message.
func BenchmarkTellWithMetrics(b *testing.B) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	sys, err := actor.NewSystem(actor.SystemConfig{MeterProvider: mp, KindMiddleware: middleware.KindTelemetry()})
	require.NoError(b, err)
	b.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	done := make(chan struct{})
	n, target := 0, b.N
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		if _, ok := c.Message().(*ping); ok {
			n++
			if n == target {
				close(done)
			}
		}
	}, actor.WithKind("sink")))
	msg := &ping{}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sys.Root().Send(pid, msg)
	}
	<-done
}
