package middleware

import (
	"context"
	"fmt"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/fraktor-go/fraktor/scheduler"
)

// Instrument names recorded by [Telemetry] (S7).
const (
	// MetricInvokeDuration is a histogram of batch durations, in seconds.
	MetricInvokeDuration = "fraktor.actor.invoke.duration"
	// MetricDequeued counts user messages processed by batches.
	MetricDequeued = "fraktor.actor.dequeued"
	// MetricSuspends counts batches that ended Suspended, by reason.
	MetricSuspends = "fraktor.actor.suspends"
	// MetricFailures counts batches that ended Failed. Its name is not the
	// runtime's actor.MetricActorFailures (failures, in the actor scope):
	// an exporter that flattens scopes would merge the two.
	MetricFailures = "fraktor.actor.invoke.failures"
	// AttrSuspendReason is the attribute of MetricSuspends that holds the
	// scheduler.SuspendReason ("rate_limit", "actor", "backpressure").
	AttrSuspendReason = "fraktor.suspend.reason"
)

// meterName is the instrumentation scope of the instruments.
const meterName = "github.com/fraktor-go/fraktor/scheduler/middleware"

// durationBounds are histogram buckets suited to batch durations, from a
// microsecond to ten seconds.
var durationBounds = []float64{
	0.000001, 0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005,
	0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
}

// Telemetry records OpenTelemetry metrics for every batch (S7, S8): its
// duration, the user messages it processed, and whether it ended Suspended or
// Failed. It records in AfterInvoke only and never breaks.
//
// A Telemetry is immutable after construction and safe for concurrent use:
// one instance may be shared by every invoker of a system. Its attributes are
// fixed at construction (no per-actor attributes, which would make the
// cardinality unbounded), so recording allocates nothing with the OTel SDK.
type Telemetry struct {
	clock    scheduler.Clock
	duration metric.Float64Histogram
	dequeued metric.Int64Counter
	suspends metric.Int64Counter
	failures metric.Int64Counter
	attrs    []attribute.KeyValue
	recOpts  []metric.RecordOption
	addOpts  []metric.AddOption
	byReason [3][]metric.AddOption // indexed by scheduler.SuspendReason
}

// TelemetryOption configures a Telemetry.
type TelemetryOption func(*telemetryOptions)

type telemetryOptions struct {
	attrs []attribute.KeyValue
}

// WithAttributes adds attributes to every measurement (for example the system
// name). They are copied.
func WithAttributes(kv ...attribute.KeyValue) TelemetryOption {
	return func(o *telemetryOptions) { o.attrs = append(o.attrs, kv...) }
}

// NewTelemetry creates the instruments on mp's meter. A nil mp records
// nothing (the OTel no-op provider). clock must be the executor's clock, the
// one InvokeContext.Start is read from; nil means scheduler.SystemClock.
//
// It returns ErrInstrument when the provider refuses an instrument, hands
// out a nil meter or instrument, or panics (a typed-nil provider does):
// a nil instrument would panic on every batch's AfterInvoke, that is fail
// the actor on every turn (TestTelemetry_BrokenProvider).
func NewTelemetry(mp metric.MeterProvider, clock scheduler.Clock, opts ...TelemetryOption) (_ *Telemetry, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: the meter provider panicked: %v", ErrInstrument, r)
		}
	}()
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	if clock == nil {
		clock = scheduler.SystemClock{}
	}
	var o telemetryOptions
	for _, opt := range opts {
		opt(&o)
	}
	m := mp.Meter(meterName)
	if m == nil {
		return nil, fmt.Errorf("%w: the meter provider returned a nil meter", ErrInstrument)
	}
	t := &Telemetry{clock: clock, attrs: append([]attribute.KeyValue(nil), o.attrs...)}
	if t.duration, err = m.Float64Histogram(MetricInvokeDuration,
		metric.WithUnit("s"),
		metric.WithDescription("Duration of one mailbox batch (InvokeBatch)."),
		metric.WithExplicitBucketBoundaries(durationBounds...)); err != nil {
		return nil, instrumentErr(MetricInvokeDuration, err)
	}
	if t.dequeued, err = m.Int64Counter(MetricDequeued,
		metric.WithUnit("{message}"),
		metric.WithDescription("User messages processed by mailbox batches.")); err != nil {
		return nil, instrumentErr(MetricDequeued, err)
	}
	if t.suspends, err = m.Int64Counter(MetricSuspends,
		metric.WithUnit("{suspend}"),
		metric.WithDescription("Mailbox batches that ended suspended, by reason.")); err != nil {
		return nil, instrumentErr(MetricSuspends, err)
	}
	if t.failures, err = m.Int64Counter(MetricFailures,
		metric.WithUnit("{failure}"),
		metric.WithDescription("Mailbox batches that ended with an actor failure.")); err != nil {
		return nil, instrumentErr(MetricFailures, err)
	}
	if t.duration == nil || t.dequeued == nil || t.suspends == nil || t.failures == nil {
		return nil, fmt.Errorf("%w: the meter returned a nil instrument", ErrInstrument)
	}
	// Precompute the attribute sets, so recording builds none.
	base := metric.WithAttributeSet(attribute.NewSet(t.attrs...))
	t.recOpts = []metric.RecordOption{base}
	t.addOpts = []metric.AddOption{base}
	for r := range t.byReason {
		t.byReason[r] = []metric.AddOption{t.reasonSet(scheduler.SuspendReason(r))}
	}
	return t, nil
}

func instrumentErr(name string, err error) error {
	return fmt.Errorf("%w %s: %w", ErrInstrument, name, err)
}

// reasonSet is the attribute set of a suspension for reason r.
func (t *Telemetry) reasonSet(r scheduler.SuspendReason) metric.MeasurementOption {
	kv := append(append(make([]attribute.KeyValue, 0, len(t.attrs)+1), t.attrs...),
		attribute.String(AttrSuspendReason, reasonName(r)))
	return metric.WithAttributeSet(attribute.NewSet(kv...))
}

func reasonName(r scheduler.SuspendReason) string {
	switch r {
	case scheduler.ReasonActor:
		return "actor"
	case scheduler.ReasonRateLimit:
		return "rate_limit"
	case scheduler.ReasonBackpressure:
		return "backpressure"
	}
	return r.String()
}

// BeforeInvoke implements scheduler.Middleware; it records nothing.
func (t *Telemetry) BeforeInvoke(*scheduler.InvokeContext) scheduler.ControlFlow {
	return scheduler.Continue
}

// AfterInvoke implements scheduler.Middleware. It records the batch duration
// (now - ctx.Start on the clock; skipped when Start is zero), ctx.Processed
// dequeued messages, and one suspend or failure according to result.
func (t *Telemetry) AfterInvoke(ctx *scheduler.InvokeContext, result scheduler.InvokeResult) {
	bg := context.Background()
	if !ctx.Start.IsZero() {
		t.duration.Record(bg, t.clock.Now().Sub(ctx.Start).Seconds(), t.recOpts...)
	}
	if ctx.Processed > 0 {
		t.dequeued.Add(bg, int64(ctx.Processed), t.addOpts...)
	}
	switch result.Kind {
	case scheduler.ResultSuspended:
		if int(result.Reason) < len(t.byReason) {
			t.suspends.Add(bg, 1, t.byReason[result.Reason]...)
		} else {
			t.suspends.Add(bg, 1, t.reasonSet(result.Reason))
		}
	case scheduler.ResultFailed:
		t.failures.Add(bg, 1, t.addOpts...)
	}
}

// AttrActorKind is the attribute that KindTelemetry gives each kind's
// instruments; it is the attribute actor.AttrActorKind names.
const AttrActorKind = "fraktor.actor.kind"

// KindTelemetry returns a function for actor.SystemConfig.KindMiddleware:
// one Telemetry per actor kind, on the system's MeterProvider and Clock,
// with the attribute AttrActorKind set to the kind besides the attributes of
// opts. A kind whose instruments the provider refuses gets no middleware.
func KindTelemetry(opts ...TelemetryOption) func(kind string, mp metric.MeterProvider, clock scheduler.Clock) scheduler.Middleware {
	opts = append([]TelemetryOption(nil), opts...)
	return func(kind string, mp metric.MeterProvider, clock scheduler.Clock) scheduler.Middleware {
		t, err := NewTelemetry(mp, clock, append(opts[:len(opts):len(opts)], WithAttributes(attribute.String(AttrActorKind, kind)))...)
		if err != nil {
			return nil
		}
		return t
	}
}
