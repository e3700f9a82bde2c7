package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/scheduler/middleware"
)

// The runtime's instruments and KindTelemetry's share one MeterProvider, so
// no name may be registered under both scopes: an exporter that flattens
// scopes (Prometheus) would see one metric with two meanings and two units.
// Before, both scopes had a "fraktor.actor.failures" counter ({count} of
// failures in the actor scope, {failure} of failed batches here). Both
// counters are recorded here (an actor fails once) and every name collected
// must come from one scope only.
func TestTelemetryMetricNamesDistinctFromTheRuntimes(t *testing.T) {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	sys, err := actor.NewSystem(actor.SystemConfig{MeterProvider: mp, KindMiddleware: middleware.KindTelemetry()})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pid := sys.Root().Spawn(actor.PropsFromFunc(func(c actor.Context) {
		switch m := c.Message().(type) {
		case string:
			if m == "fail" {
				panic("fail")
			}
			c.Respond(m)
		}
	}, actor.WithKind("failing")))
	sys.Root().Send(pid, "fail")
	_, err = actor.Request[string](ctx, sys.Root(), pid, "after") // the restarted actor answers
	require.NoError(t, err)
	require.NoError(t, sys.Shutdown(ctx)) // every batch has ended: its metrics are recorded

	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(ctx, &rm))
	scopes := map[string]string{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if other, ok := scopes[m.Name]; ok && other != sm.Scope.Name {
				t.Errorf("metric %q is registered under two scopes: %s and %s", m.Name, other, sm.Scope.Name)
			}
			scopes[m.Name] = sm.Scope.Name
		}
	}
	require.Contains(t, scopes, actor.MetricActorFailures)
	require.Contains(t, scopes, middleware.MetricFailures)
}
