package actor

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// metrics holds the system's OpenTelemetry instruments (names start
// "fraktor."). Everything here is off the per-message path.
type metrics struct {
	nSpawned, nStopped, nRestarted, nFailures, nDeadLetters metric.Int64Counter
	nFutStarted, nFutCompleted, nFutTimedOut                metric.Int64Counter
	reg                                                     metric.Registration
}

func newMetrics(mp metric.MeterProvider, s *System) (*metrics, error) {
	if mp == nil {
		mp = noop.NewMeterProvider()
	}
	m := mp.Meter("github.com/fraktor-go/fraktor/actor")
	var err, e error
	mk := func(name, desc string) metric.Int64Counter {
		var c metric.Int64Counter
		c, e = m.Int64Counter(name, metric.WithDescription(desc), metric.WithUnit("{count}"))
		err = errors.Join(err, e)
		return c
	}
	out := &metrics{
		nSpawned:      mk("fraktor.actor.spawned", "Actors spawned."),
		nStopped:      mk("fraktor.actor.stopped", "Actors stopped."),
		nRestarted:    mk("fraktor.actor.restarted", "Actor restarts."),
		nFailures:     mk("fraktor.actor.failures", "Actor failures (panics in Receive, escalations)."),
		nDeadLetters:  mk("fraktor.deadletters", "Messages that could not be delivered."),
		nFutStarted:   mk("fraktor.future.started", "Futures created."),
		nFutCompleted: mk("fraktor.future.completed", "Futures completed with an answer."),
		nFutTimedOut:  mk("fraktor.future.timedout", "Futures that timed out."),
	}
	workers, e := m.Int64ObservableGauge("fraktor.scheduler.workers.parked", metric.WithDescription("Parked workers of the system pool."), metric.WithUnit("{worker}"))
	err = errors.Join(err, e)
	procs, e := m.Int64ObservableGauge("fraktor.actor.processes", metric.WithDescription("Registered local processes."), metric.WithUnit("{process}"))
	err = errors.Join(err, e)
	if err != nil {
		return nil, err
	}
	out.reg, err = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		if s.coord != nil {
			o.ObserveInt64(workers, int64(s.coord.Parked()))
		}
		o.ObserveInt64(procs, int64(s.registry.len()))
		return nil
	}, workers, procs)
	return out, err
}

var bg = context.Background()

func (m *metrics) restarted(*cell) { m.nRestarted.Add(bg, 1) }
func (m *metrics) stopped(*cell)   { m.nStopped.Add(bg, 1) }
func (m *metrics) failed(*cell)    { m.nFailures.Add(bg, 1) }
func (m *metrics) spawnedOne()     { m.nSpawned.Add(bg, 1) }
func (m *metrics) deadLetter()     { m.nDeadLetters.Add(bg, 1) }
func (m *metrics) futureStarted()  { m.nFutStarted.Add(bg, 1) }
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
