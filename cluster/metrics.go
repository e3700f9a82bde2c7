package cluster

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// clusterMetrics are the runtime's OpenTelemetry instruments under
// fraktor.cluster. (V4.3, B4.3, B4.5). Attributes carry the kind, never the
// identity: cardinality stays bounded by the number of kinds.
type clusterMetrics struct {
	resolve    metric.Float64Histogram
	request    metric.Float64Histogram
	retries    metric.Int64Counter
	failures   metric.Int64Counter
	fencing    metric.Int64Counter
	activation metric.Int64Counter
	forwards   metric.Int64Counter
	reg        metric.Registration

	mu     sync.Mutex
	active map[string]int64 // kind → activations hosted here
	attrs  sync.Map         // kind → metric.MeasurementOption
}

func newClusterMetrics(mp metric.MeterProvider) (*clusterMetrics, error) {
	m := mp.Meter("github.com/fraktor-go/fraktor/cluster")
	cm := &clusterMetrics{active: map[string]int64{}}
	var err, e error
	cm.resolve, e = m.Float64Histogram("fraktor.cluster.resolve.duration", metric.WithUnit("s"),
		metric.WithDescription("time to resolve an identity to its activation's PID (cache miss: activation request)"))
	err = errors.Join(err, e)
	cm.request, e = m.Float64Histogram("fraktor.cluster.request.duration", metric.WithUnit("s"),
		metric.WithDescription("time of a successful grain request, retries included"))
	err = errors.Join(err, e)
	cm.retries, e = m.Int64Counter("fraktor.cluster.request.retries", metric.WithUnit("{retry}"),
		metric.WithDescription("grain request attempts after the first"))
	err = errors.Join(err, e)
	cm.failures, e = m.Int64Counter("fraktor.cluster.activation.failures", metric.WithUnit("{activation}"),
		metric.WithDescription("activations that failed on this member"))
	err = errors.Join(err, e)
	cm.activation, e = m.Int64Counter("fraktor.cluster.activations", metric.WithUnit("{activation}"),
		metric.WithDescription("activations started on this member"))
	err = errors.Join(err, e)
	cm.forwards, e = m.Int64Counter("fraktor.cluster.forwards", metric.WithUnit("{message}"),
		metric.WithDescription("Sends that reached a grain of this member that was gone and were forwarded to its next activation"))
	err = errors.Join(err, e)
	cm.fencing, e = m.Int64Counter("fraktor.cluster.fencing", metric.WithUnit("{event}"),
		metric.WithDescription("times this member fenced itself"))
	err = errors.Join(err, e)
	gauge, e := m.Int64ObservableGauge("fraktor.cluster.virtual_actors", metric.WithUnit("{activation}"),
		metric.WithDescription("activations (held leases) on this member"))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	cm.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		cm.mu.Lock()
		defer cm.mu.Unlock()
		for k, n := range cm.active {
			o.ObserveInt64(gauge, n, cm.kindAttr(k))
		}
		return nil
	}, gauge)
	return cm, err
}

func (m *clusterMetrics) kindAttr(kind string) metric.MeasurementOption {
	if v, ok := m.attrs.Load(kind); ok {
		return v.(metric.MeasurementOption)
	}
	v, _ := m.attrs.LoadOrStore(kind, metric.WithAttributeSet(attribute.NewSet(attribute.String("kind", kind))))
	return v.(metric.MeasurementOption)
}

func (m *clusterMetrics) close() {
	if m.reg != nil {
		_ = m.reg.Unregister()
	}
}

func (m *clusterMetrics) activated(kind string) {
	m.mu.Lock()
	m.active[kind]++
	m.mu.Unlock()
	m.activation.Add(context.Background(), 1, m.kindAttr(kind))
}

func (m *clusterMetrics) deactivated(kind string) {
	m.mu.Lock()
	m.active[kind]--
	m.mu.Unlock()
}

func (m *clusterMetrics) activationFailed(kind string) {
	m.failures.Add(context.Background(), 1, m.kindAttr(kind))
}

func (m *clusterMetrics) forwarded(kind string) {
	m.forwards.Add(context.Background(), 1, m.kindAttr(kind))
}

func (m *clusterMetrics) fenced() { m.fencing.Add(context.Background(), 1) }

func (m *clusterMetrics) retried(kind string) {
	m.retries.Add(context.Background(), 1, m.kindAttr(kind))
}

func (m *clusterMetrics) resolved(kind string, d time.Duration) {
	m.resolve.Record(context.Background(), d.Seconds(), m.kindAttr(kind))
}

func (m *clusterMetrics) requested(kind string, d time.Duration) {
	m.request.Record(context.Background(), d.Seconds(), m.kindAttr(kind))
}
