package remote_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
	"github.com/fraktor-go/fraktor/testkit"
)

// meteredSystem starts a system with remote installed whose
// SystemConfig.MeterProvider is read by the returned ManualReader.
func meteredSystem(t *testing.T, name string, opts ...remote.Option) (*actor.System, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
	sys := testkit.NewPeerSystem(t, func(c *actor.SystemConfig) {
		c.Name = name
		c.MeterProvider = mp
		c.Extensions = []actor.ExtensionInstaller{remote.Install(testConfig(t), opts...)}
	})
	return sys, reader
}

// scopes collects reader: the values of the int64 sums of each meter, by
// meter and instrument name.
func scopes(t *testing.T, reader *sdkmetric.ManualReader) map[string]map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, reader.Collect(context.Background(), &rm))
	out := map[string]map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		vals := map[string]int64{}
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && len(sum.DataPoints) == 1 {
				vals[m.Name] = sum.DataPoints[0].Value
			}
		}
		if len(vals) > 0 {
			out[sm.Scope.Name] = vals
		}
	}
	return out
}

// TestRemoteExtensionPublishesOnTheSystemsMeterProvider: the remote
// extension's Node publishes on the actor system's MeterProvider (a
// request and its answer move its instruments) until the system shuts
// down; WithMeterProvider(nil) given to Install turns it off.
func TestRemoteExtensionPublishesOnTheSystemsMeterProvider(t *testing.T) {
	sysA, readerA := meteredSystem(t, "a")
	sysB, readerB := meteredSystem(t, "b")
	sysC, readerC := meteredSystem(t, "c", remote.WithMeterProvider(nil))
	echo := remotePID(echoOn(t, sysB, "echo", "b"))
	reply, err := actor.Request[*EchoReply](ctxWait(t), sysA.Root(), echo, &Echo{Text: "hi"})
	require.NoError(t, err)
	require.Equal(t, "hi", reply.Text)
	_, err = actor.Request[*EchoReply](ctxWait(t), sysC.Root(), remotePID(echo), &Echo{Text: "hi"})
	require.NoError(t, err)

	nodeA, nodeB := remote.Get(sysA).Node(), remote.Get(sysB).Node()
	// EnvelopesReceived moves once the frame's delivery has returned,
	// EnvelopesSent once the write has: either may follow the answer.
	require.Eventually(t, func() bool {
		return nodeB.Stats().EnvelopesReceived == 2 && nodeA.Stats().EnvelopesSent == 1
	}, wait, time.Millisecond)
	got := scopes(t, readerB)[remote.MeterName]
	assert.Equal(t, int64(2), got[remote.MetricEnvelopesReceived])
	assert.Equal(t, int64(2), got[remote.MetricConnections], "a and c")
	assert.Equal(t, int64(2), got[remote.MetricInboundConnections])
	assert.Positive(t, got[remote.MetricFramesReceived])
	got = scopes(t, readerA)[remote.MeterName]
	assert.Equal(t, int64(1), got[remote.MetricEnvelopesSent])
	assert.Equal(t, int64(1), got[remote.MetricConnections])

	c := scopes(t, readerC)
	assert.NotContains(t, c, remote.MeterName, "WithMeterProvider(nil) turns the remote instruments off")
	assert.Contains(t, c, "github.com/fraktor-go/fraktor/actor", "the system's own instruments stay")

	require.NoError(t, sysA.Shutdown(ctxWait(t)))
	assert.NotContains(t, scopes(t, readerA), remote.MeterName, "unregistered at Shutdown")
}
