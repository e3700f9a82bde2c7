package actor

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"

	"github.com/fraktor-go/fraktor/scheduler"
)

// AttrActorKind is the attribute that carries an actor's kind: the name given
// with WithKind, or the Go type of its instance. It is low-cardinality by
// design: never a PID.
const AttrActorKind = "fraktor.actor.kind"

// Instrument names of the actor system (see docs/observability.md).
const (
	MetricSpawned         = "fraktor.actor.spawned"
	MetricStopped         = "fraktor.actor.stopped"
	MetricRestarted       = "fraktor.actor.restarted"
	MetricActorFailures   = "fraktor.actor.failures"
	MetricDeadLetters     = "fraktor.deadletters"
	MetricFutureStarted   = "fraktor.future.started"
	MetricFutureCompleted = "fraktor.future.completed"
	MetricFutureTimedOut  = "fraktor.future.timedout"
	MetricWorkersParked   = "fraktor.scheduler.workers.parked"
	MetricWorkersBusy     = "fraktor.scheduler.workers.busy"
	MetricProcesses       = "fraktor.actor.processes"
	MetricMailboxLength   = "fraktor.mailbox.length"
)

// metrics holds the system's OpenTelemetry instruments. Nothing here runs
// per message: counters move at spawn, stop, restart, failure, dead letter
// and future events; gauges are observed in one callback per collection.
type metrics struct {
	mp                                                      metric.MeterProvider
	clock                                                   scheduler.Clock
	kindMW                                                  func(kind string, mp metric.MeterProvider, clock scheduler.Clock) scheduler.Middleware
	logger                                                  *slog.Logger
	nSpawned, nStopped, nRestarted, nFailures, nDeadLetters metric.Int64Counter
	nFutStarted, nFutCompleted, nFutTimedOut                metric.Int64Counter
	reg                                                     metric.Registration
	kinds                                                   sync.Map // kind name → *kindMetrics
}

// kindMetrics is what cells of one kind share: the precomputed attribute
// option (so recording allocates nothing) and the kind's invoke middleware
// (SystemConfig.KindMiddleware).
type kindMetrics struct {
	opts  []metric.AddOption // passed with ...: no slice allocated per call
	mw    scheduler.Middleware
	owner *metrics // the system's metrics it belongs to: Props cache it without a wrapper (newCell)
}

func newMetrics(mp metric.MeterProvider, s *System) (*metrics, error) {
	out := &metrics{clock: s.clock, kindMW: s.cfg.KindMiddleware, logger: s.logger}
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	out.mp = mp
	m := mp.Meter("github.com/fraktor-go/fraktor/actor")
	var err, e error
	mk := func(name, desc string) metric.Int64Counter {
		var c metric.Int64Counter
		c, e = m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{count}"))
		err = errors.Join(err, e)
		return c
	}
	out.nSpawned = mk(MetricSpawned, "Actors spawned.")
	out.nStopped = mk(MetricStopped, "Actors stopped.")
	out.nRestarted = mk(MetricRestarted, "Actor restarts.")
	out.nFailures = mk(MetricActorFailures, "Actor failures (panics in Receive, escalations).")
	out.nDeadLetters = mk(MetricDeadLetters, "Messages that could not be delivered.")
	out.nFutStarted = mk(MetricFutureStarted, "Futures created.")
	out.nFutCompleted = mk(MetricFutureCompleted, "Futures completed with an answer or an error other than a timeout.")
	out.nFutTimedOut = mk(MetricFutureTimedOut, "Futures that timed out.")
	gauge := func(name, desc, unit string) metric.Int64ObservableGauge {
		g, e := m.Int64ObservableGauge(name, metric.WithDescription(desc), metric.WithUnit(unit))
		err = errors.Join(err, e)
		return g
	}
	parked := gauge(MetricWorkersParked, "Parked workers of the system pool.", "{worker}")
	busy := gauge(MetricWorkersBusy, "Workers of the system pool running or looking for work.", "{worker}")
	procs := gauge(MetricProcesses, "Registered local processes.", "{process}")
	mailboxes := gauge(MetricMailboxLength, "User messages queued in all mailboxes, as of each mailbox's last invocation.", "{message}")
	if err != nil {
		return nil, err
	}
	out.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if c := s.coord; c != nil {
			p := c.Parked()
			o.ObserveInt64(parked, int64(p))
			o.ObserveInt64(busy, int64(c.Workers()-p))
		}
		o.ObserveInt64(procs, int64(s.registry.len()))
		var queued int64
		s.registry.each(func(p Process) {
			// Only with kind middleware (km.mw, set once) is it counted; the
			// cell's invoke chain then exists from its spawn on, and
			// chains() never replaces it.
			if c, ok := p.(*cell); ok && c.km.mw != nil {
				queued += int64(c.mw.inv.queued.Load())
			}
		})
		o.ObserveInt64(mailboxes, queued)
		return nil
	}, parked, busy, procs, mailboxes)
	return out, err
}

// kind returns the shared metrics of a kind, creating them once.
func (m *metrics) kind(name string) *kindMetrics {
	if k, ok := m.kinds.Load(name); ok {
		return k.(*kindMetrics)
	}
	attrs := attribute.NewSet(attribute.String(AttrActorKind, name))
	k := &kindMetrics{opts: []metric.AddOption{metric.WithAttributeSet(attrs)}, owner: m}
	if m.kindMW != nil {
		k.mw = m.kindMiddleware(name)
	}
	actual, _ := m.kinds.LoadOrStore(name, k)
	return actual.(*kindMetrics)
}

// kindMiddleware calls the user's KindMiddleware; a panic there leaves the
// kind without middleware.
func (m *metrics) kindMiddleware(kind string) (mw scheduler.Middleware) {
	defer func() {
		if r := recover(); r != nil {
			m.logger.Error("actor: KindMiddleware panicked; the kind has no invoke middleware", "kind", kind, "panic", r)
			mw = nil
		}
	}()
	return m.kindMW(kind, m.mp, m.clock)
}

func kindOf(p *Props, a Actor) string {
	if k := p.o().kind; k != "" {
		return k
	}
	if a == nil {
		return "<nil>"
	}
	return reflect.TypeOf(a).String()
}

var bg = context.Background()

func (m *metrics) restarted(c *cell) { m.nRestarted.Add(bg, 1, c.km.opts...) }
func (m *metrics) stopped(c *cell)   { m.nStopped.Add(bg, 1, c.km.opts...) }
func (m *metrics) failed(c *cell)    { m.nFailures.Add(bg, 1, c.km.opts...) }
func (m *metrics) spawned(c *cell)   { m.nSpawned.Add(bg, 1, c.km.opts...) }
func (m *metrics) deadLetter()       { m.nDeadLetters.Add(bg, 1) }
func (m *metrics) futureStarted()    { m.nFutStarted.Add(bg, 1) }
func (m *metrics) futureCompleted(err error) {
	if errors.Is(err, ErrTimeout) {
		m.nFutTimedOut.Add(bg, 1)
		return
	}
	m.nFutCompleted.Add(bg, 1)
}

func (m *metrics) close() {
	if m.reg != nil {
		_ = m.reg.Unregister()
	}
}
