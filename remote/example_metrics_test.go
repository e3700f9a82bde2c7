package remote_test

import (
	"context"
	"fmt"
	"slices"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// The remote extension publishes its Node's counters on the actor
// system's MeterProvider, under the meter remote.MeterName; here a
// ManualReader collects them once (an exporter's reader would do so
// periodically).
func ExampleWithMeterProvider() {
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer func() { _ = mp.Shutdown(context.Background()) }()
	sys, err := actor.NewSystem(actor.SystemConfig{
		Name:          "metrics",
		MeterProvider: mp,
		Extensions:    []actor.ExtensionInstaller{remote.Install(remote.DefaultConfig())},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() { _ = sys.Shutdown(context.Background()) }()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		fmt.Println(err)
		return
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != remote.MeterName {
			continue
		}
		for _, m := range sm.Metrics {
			sum := m.Data.(metricdata.Sum[int64])
			lines = append(lines, fmt.Sprintf("%s %s monotonic=%t %d", m.Name, m.Unit, sum.IsMonotonic, sum.DataPoints[0].Value))
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// fraktor.remote.backlog.refused {message} monotonic=true 0
	// fraktor.remote.connections.inbound {connection} monotonic=false 0
	// fraktor.remote.connections.open {connection} monotonic=false 0
	// fraktor.remote.dials.deferred {dial} monotonic=true 0
	// fraktor.remote.endpoints {endpoint} monotonic=false 0
	// fraktor.remote.envelopes.answers_dropped {envelope} monotonic=true 0
	// fraktor.remote.envelopes.queue_full {envelope} monotonic=true 0
	// fraktor.remote.envelopes.received {envelope} monotonic=true 0
	// fraktor.remote.envelopes.sent {envelope} monotonic=true 0
	// fraktor.remote.envelopes.undelivered {envelope} monotonic=true 0
	// fraktor.remote.frames.received {frame} monotonic=true 0
	// fraktor.remote.frames.sent {frame} monotonic=true 0
	// fraktor.remote.future_answers.unmatched {envelope} monotonic=true 0
	// fraktor.remote.handshakes.duplicate {handshake} monotonic=true 0
	// fraktor.remote.handshakes.inbound_refused {handshake} monotonic=true 0
	// fraktor.remote.handshakes.refused {handshake} monotonic=true 0
	// fraktor.remote.protocol_errors {connection} monotonic=true 0
	// fraktor.remote.queue.usage By monotonic=false 0
	// fraktor.remote.spawns.refused {spawn} monotonic=true 0
	// fraktor.remote.watches.refused {watch} monotonic=true 0
	// fraktor.remote.watches.refused_by_peers {watch} monotonic=true 0
}
