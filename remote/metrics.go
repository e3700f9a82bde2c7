package remote

import (
	"context"
	"errors"
	"fmt"
	"math"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
)

// MeterName is the OpenTelemetry meter (instrumentation scope) of a Node's
// instruments.
const MeterName = "github.com/fraktor-go/fraktor/remote"

// Instrument names of a Node (see docs/observability.md). Each reports the
// Stats field it is named after.
//
// The counters (monotonic sums, OpenTelemetry asynchronous Counters):
const (
	MetricEnvelopesSent          = "fraktor.remote.envelopes.sent"             // Stats.EnvelopesSent
	MetricEnvelopesReceived      = "fraktor.remote.envelopes.received"         // Stats.EnvelopesReceived
	MetricFramesSent             = "fraktor.remote.frames.sent"                // Stats.FramesSent
	MetricFramesReceived         = "fraktor.remote.frames.received"            // Stats.FramesReceived
	MetricUndelivered            = "fraktor.remote.envelopes.undelivered"      // Stats.Undelivered
	MetricQueueFull              = "fraktor.remote.envelopes.queue_full"       // Stats.QueueFull
	MetricAnswersDropped         = "fraktor.remote.envelopes.answers_dropped"  // Stats.AnswersDropped
	MetricHandshakesRefused      = "fraktor.remote.handshakes.refused"         // Stats.HandshakesRefused
	MetricInboundRefused         = "fraktor.remote.handshakes.inbound_refused" // Stats.InboundRefused
	MetricHandshakesDuplicate    = "fraktor.remote.handshakes.duplicate"       // Stats.HandshakesDuplicate
	MetricProtocolErrors         = "fraktor.remote.protocol_errors"            // Stats.ProtocolErrors
	MetricDialsDeferred          = "fraktor.remote.dials.deferred"             // Stats.DialsDeferred
	MetricWatchesRefused         = "fraktor.remote.watches.refused"            // Stats.WatchesRefused
	MetricWatchesRefusedByPeers  = "fraktor.remote.watches.refused_by_peers"   // Stats.WatchesRefusedByPeers
	MetricFutureAnswersUnmatched = "fraktor.remote.future_answers.unmatched"   // Stats.FutureAnswersUnmatched
	MetricSpawnsRefused          = "fraktor.remote.spawns.refused"             // Stats.SpawnsRefused
	MetricBacklogRefused         = "fraktor.remote.backlog.refused"            // Stats.BacklogRefused
)

// The values of now (non-monotonic sums, OpenTelemetry asynchronous
// UpDownCounters):
const (
	MetricQueuedBytes        = "fraktor.remote.queue.usage"         // Stats.QueuedBytes
	MetricConnections        = "fraktor.remote.connections.open"    // Stats.Connections
	MetricInboundConnections = "fraktor.remote.connections.inbound" // Stats.Inbound
	MetricEndpoints          = "fraktor.remote.endpoints"           // Stats.Endpoints
)

// WithMeterProvider makes the Node publish its counters (Stats) as
// OpenTelemetry instruments of meter MeterName on mp, from Start until
// Close. They are asynchronous instruments: the Node registers one
// callback, which reads Stats when mp's readers collect, so sending and
// receiving do no more work with them than without. A nil mp, or the
// OpenTelemetry no-op provider, registers nothing (the default). A
// provider that fails or panics (user code) fails NewNode, while making
// the instruments, or Start, while registering the callback, with an
// error; Close logs an error of unregistering it (Warn).
//
// The remote extension passes the actor system's MeterProvider
// (actor.SystemConfig.MeterProvider); an option given to Install replaces
// it (WithMeterProvider(nil) turns the remote instruments off). It is an
// Option rather than a Config field for the reason the clock is: it is
// the process's wiring, shared with the actor system, not a setting of
// the node that one would serialize or compare.
//
// The instruments carry no attributes: an attribute per peer address would
// let peers, hostile ones included, grow the number of series without
// bound. Nodes that share a provider report sums: every instrument is a
// sum (Counter or UpDownCounter), which the SDK adds across callbacks, so
// a process with two Nodes reports the total of both.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(n *Node) { n.mp = mp }
}

// nodeMetrics are a Node's instruments; NewNode makes them, Start
// registers their callback and Close unregisters it.
type nodeMetrics struct {
	meter    metric.Meter
	counters []metric.Int64ObservableCounter
	upDowns  []metric.Int64ObservableUpDownCounter
	all      []metric.Observable
}

// remoteCounter is one counter instrument and the Stats field it reads.
type remoteCounter struct {
	name, unit, desc string
	read             func(*Stats) uint64
}

// remoteCounters are the monotonic counters, in the order of
// nodeMetrics.counters.
var remoteCounters = [...]remoteCounter{
	{MetricEnvelopesSent, "{envelope}", "Envelopes written to a connection.", func(s *Stats) uint64 { return s.EnvelopesSent }},
	{MetricEnvelopesReceived, "{envelope}", "Envelopes delivered from peers, counted per frame once all of its envelopes were delivered.", func(s *Stats) uint64 { return s.EnvelopesReceived }},
	{MetricFramesSent, "{frame}", "Frames written to connections.", func(s *Stats) uint64 { return s.FramesSent }},
	{MetricFramesReceived, "{frame}", "Frames read from connections.", func(s *Stats) uint64 { return s.FramesReceived }},
	{MetricUndelivered, "{envelope}", "Envelopes that could not be delivered, both ways: not written to a peer, or received and not decodable.", func(s *Stats) uint64 { return s.Undelivered }},
	{MetricQueueFull, "{envelope}", "Envelopes refused because their peer's outbound queue was full (also counted as undelivered).", func(s *Stats) uint64 { return s.QueueFull }},
	{MetricAnswersDropped, "{envelope}", "Runtime answers (dead-letter responses, Terminated for missing processes) to an address without an endpoint, dropped instead of dialled.", func(s *Stats) uint64 { return s.AnswersDropped }},
	{MetricHandshakesRefused, "{handshake}", "Handshakes that failed or were refused, both ways (not the duplicate-connection tie-break).", func(s *Stats) uint64 { return s.HandshakesRefused }},
	{MetricHandshakesDuplicate, "{handshake}", "Handshakes ended by the simultaneous-dial tie-break or the duplicate-connection check: a few at every start of a healthy cluster.", func(s *Stats) uint64 { return s.HandshakesDuplicate }},
	{MetricInboundRefused, "{handshake}", "Inbound handshakes refused at MaxInboundConnections (also counted as refused handshakes).", func(s *Stats) uint64 { return s.InboundRefused }},
	{MetricProtocolErrors, "{connection}", "Established connections closed because of a bad frame.", func(s *Stats) uint64 { return s.ProtocolErrors }},
	{MetricDialsDeferred, "{dial}", "Dials the node-wide dial budget deferred to their next backoff slot.", func(s *Stats) uint64 { return s.DialsDeferred }},
	{MetricWatchesRefused, "{watch}", "Watches from peers refused at MaxWatchesPerPeer.", func(s *Stats) uint64 { return s.WatchesRefused }},
	{MetricWatchesRefusedByPeers, "{watch}", "Watches of local watchers that the watched actor's node refused at its bound.", func(s *Stats) uint64 { return s.WatchesRefusedByPeers }},
	{MetricFutureAnswersUnmatched, "{envelope}", "Answers from peers to a future ID that names no pending future (late or made up).", func(s *Stats) uint64 { return s.FutureAnswersUnmatched }},
	{MetricSpawnsRefused, "{spawn}", "Remote spawn requests from peers refused at MaxSpawnsPerPeer.", func(s *Stats) uint64 { return s.SpawnsRefused }},
	{MetricBacklogRefused, "{message}", "User messages from peers refused because their target's mailbox held MaxMailboxBacklog or more.", func(s *Stats) uint64 { return s.BacklogRefused }},
}

// remoteUpDown is one instrument of a value of now and the Stats field it
// reads.
type remoteUpDown struct {
	name, unit, desc string
	read             func(*Stats) int64
}

// remoteUpDowns are the values of now, in the order of
// nodeMetrics.upDowns.
var remoteUpDowns = [...]remoteUpDown{
	{MetricQueuedBytes, "By", "Estimated bytes of the envelopes queued for all peers.", func(s *Stats) int64 { return s.QueuedBytes }},
	{MetricConnections, "{connection}", "Established connections open.", func(s *Stats) int64 { return s.Connections }},
	{MetricInboundConnections, "{connection}", "Inbound connections established or admitted in a handshake.", func(s *Stats) int64 { return s.Inbound }},
	{MetricEndpoints, "{endpoint}", "Peer addresses with an endpoint (queue, connection or reconnect state).", func(s *Stats) int64 { return int64(s.Endpoints) }},
}

// newNodeMetrics makes the instruments on mp, or returns nil when mp is
// nil or the no-op provider: then nothing is registered. A provider that
// fails or panics makes it fail.
func newNodeMetrics(mp metric.MeterProvider) (nm *nodeMetrics, err error) {
	if mp == nil {
		return nil, nil
	}
	if _, ok := mp.(noop.MeterProvider); ok {
		return nil, nil
	}
	defer func() {
		if r := recover(); r != nil {
			err = providerPanic("making the instruments", r)
		}
		if err != nil {
			nm = nil
		}
	}()
	nm = &nodeMetrics{meter: mp.Meter(MeterName)}
	for _, c := range remoteCounters {
		inst, e := nm.meter.Int64ObservableCounter(c.name, metric.WithUnit(c.unit), metric.WithDescription(c.desc))
		err = errors.Join(err, e)
		nm.counters = append(nm.counters, inst)
		nm.all = append(nm.all, inst)
	}
	for _, u := range remoteUpDowns {
		inst, e := nm.meter.Int64ObservableUpDownCounter(u.name, metric.WithUnit(u.unit), metric.WithDescription(u.desc))
		err = errors.Join(err, e)
		nm.upDowns = append(nm.upDowns, inst)
		nm.all = append(nm.all, inst)
	}
	if err != nil {
		return nil, fmt.Errorf("remote: metrics: %w", err)
	}
	return nm, nil
}

// register registers the callback that observes n's Stats.
func (nm *nodeMetrics) register(n *Node) (reg metric.Registration, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = providerPanic("registering the callback", r)
		}
	}()
	reg, err = nm.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		st := n.Stats()
		for i, c := range remoteCounters {
			o.ObserveInt64(nm.counters[i], clampInt64(c.read(&st)))
		}
		for i, u := range remoteUpDowns {
			o.ObserveInt64(nm.upDowns[i], u.read(&st))
		}
		return nil
	}, nm.all...)
	if err != nil {
		return nil, fmt.Errorf("remote: metrics: %w", err)
	}
	return reg, nil
}

// unregisterMetrics unregisters the callback that Start registered, once.
// It is called without n.mu: a provider's Unregister may wait for a
// collection in progress, whose callback takes n.mu (Stats).
func (n *Node) unregisterMetrics(reg metric.Registration) {
	if reg == nil {
		return
	}
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = providerPanic("unregistering the callback", r)
			}
		}()
		err = reg.Unregister()
	}()
	if err != nil {
		n.log.Warn("remote: metrics: unregistering the callback failed", "err", err)
	}
}

// providerPanic is the error of a MeterProvider (user code) that panicked.
func providerPanic(what string, r any) error {
	return fmt.Errorf("remote: metrics: the MeterProvider panicked %s: %v", what, r)
}

// clampInt64 is v as an int64, at most math.MaxInt64.
func clampInt64(v uint64) int64 {
	if v > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(v)
}
