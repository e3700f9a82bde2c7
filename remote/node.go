package remote

import (
	"context"
	crand "crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
	"golang.org/x/time/rate"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/internal/backoff"
	"github.com/fraktor-go/fraktor/scheduler"
)

// Option configures what a Config cannot carry.
type Option func(*Node)

// WithTransport replaces the default TCPTransport (built from the Config's
// TLS settings), for example with a MemoryNetwork.
func WithTransport(t Transport) Option { return func(n *Node) { n.tr = t } }

// WithClock makes the Node take time from clock (for example the actor
// system's, or a scheduler.ManualClock in tests): the reconnect backoff, the
// give-up time and the heartbeat interval are measured on it. Socket
// deadlines (DialTimeout, HandshakeTimeout, WriteTimeout, HeartbeatTimeout)
// are the operating system's and stay on the wall clock. Default: the wall
// clock. The remote extension passes the system's clock.
func WithClock(clock scheduler.Clock) Option { return func(n *Node) { n.clock = clock } }

// WithRand makes the Node draw the reconnect backoff's jitter from r, so
// that a seeded r replays the same waits. The Node serializes its use of r.
// Default: the process-wide source.
func WithRand(r *rand.Rand) Option {
	return func(n *Node) { n.rand = &lockedRand{r: r} }
}

// lockedRand makes a *rand.Rand safe for the endpoints' goroutines.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) Int64N(k int64) int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Int64N(k)
}

// WithBlockList shares a BlockList (for example the cluster's) instead of a
// private one.
func WithBlockList(b *BlockList) Option { return func(n *Node) { n.bl = b } }

// Node is this process's presence on the network. It listens for peers,
// dials them lazily on the first Send, keeps one connection per peer pair,
// and moves envelopes through a bounded queue per peer.
//
// Threading: all methods are safe for concurrent use. Send never blocks.
// Hooks are called on the Node's goroutines (see Hooks). Every goroutine the
// Node starts ends before Close returns.
type Node struct {
	cfg   Config
	hooks Hooks
	tr    Transport
	bl    *BlockList
	ser   *Serializers
	log   *slog.Logger
	clock scheduler.Clock
	rand  backoff.Rand // jitter; nil: the process-wide source
	id    string
	addr  string // advertised address, set by Start

	mu        sync.Mutex
	state     nodeState
	endpoints map[string]*endpoint
	epSnap    atomic.Pointer[map[string]*endpoint] // a copy of endpoints, for Send
	running   atomic.Bool                          // state == stateRunning, for Send
	peerIDs   map[string]string                    // address → node ID of the last incarnation connected there (bounded: rememberPeer)
	peersCap  int                                  // the size at which rememberPeer forgets idle peers; maxKnownPeers
	retired   map[string]*retiredPeer              // address → what is kept of the endpoint retired unused there (retireUnused); bounded by peersCap
	gone      map[string]*goneRecord               // node ID → a peer incarnation reported terminated that may come back (markGone); bounded by peersCap
	goneSeq   uint64                               // the age of the last goneRecord
	raws      map[net.Conn]rawState                // every open socket
	forced    bool                                 // Close's grace period is over
	ln        net.Listener
	cancelRun context.CancelFunc
	unsub     func()
	stopping  chan struct{} // closed when Close begins
	closed    chan struct{} // closed when Close has finished

	// replyWaiting counts the endpoints made by a sendReply that have not
	// connected and that local code has not sent to
	// (endpoint.replyWaiting; n.mu): endpointFor makes no more than
	// Config.MaxInboundConnections.
	replyWaiting int64

	// inboundHandshakes counts accepted connections whose handshake has
	// not completed; the accept loop refuses more than
	// Config.MaxPendingHandshakes.
	inboundHandshakes atomic.Int64
	// inboundConns counts inbound connections from their admission in the
	// handshake until they close; admitInbound refuses more than
	// Config.MaxInboundConnections.
	inboundConns atomic.Int64

	refusals logThrottle // the log of refused inbound envelopes

	// dials is the node-wide dial budget (Config.DialBudget per second,
	// as burst too), on the Node's clock: see allowDial.
	dials *rate.Limiter

	// maxBacklog is Config.MaxMailboxBacklog (0: the default), the bound
	// of the reader's runs (deliverBatch).
	maxBacklog int

	wg    sync.WaitGroup
	stats nodeStats

	// mp is WithMeterProvider's provider; metrics its instruments (nil:
	// none), whose callback Start registers (metricsReg, n.mu) and Close
	// unregisters. Last, so that the fields the message path uses keep
	// their offsets.
	mp         metric.MeterProvider
	metrics    *nodeMetrics
	metricsReg metric.Registration
}

type nodeState uint8

const (
	stateNew nodeState = iota
	stateRunning
	stateClosing
	stateClosed
)

type nodeStats struct {
	envelopesSent, envelopesReceived atomic.Uint64
	framesSent, framesReceived       atomic.Uint64
	undelivered                      atomic.Uint64
	directWrites                     atomic.Uint64 // envelopes written by their sender (tryDirect)
	directHandoffs                   atomic.Uint64 // of those, frames finished by the writer goroutine (rest)
	handshakesRefused                atomic.Uint64
	handshakesDuplicate              atomic.Uint64
	inboundRefused                   atomic.Uint64
	protocolErrors                   atomic.Uint64
	queueFull                        atomic.Uint64
	dialsDeferred                    atomic.Uint64
	answersDropped                   atomic.Uint64
	watchesRefused                   atomic.Uint64 // by the remote extension
	watchesRefusedByPeers            atomic.Uint64 // by the remote extension
	futureAnswersUnmatched           atomic.Uint64 // by the remote extension
	spawnsRefused                    atomic.Uint64 // by the remote extension
	backlogRefused                   atomic.Uint64 // by the remote extension
	connections                      atomic.Int64
}

// Stats is a snapshot of a Node's counters. WithMeterProvider publishes
// each field as an OpenTelemetry instrument (see MetricEnvelopesSent).
type Stats struct {
	EnvelopesSent     uint64 // envelopes written to a connection
	EnvelopesReceived uint64 // envelopes delivered to the Deliver hook; added per frame once the hook returned for each of them
	FramesSent        uint64
	FramesReceived    uint64
	Undelivered       uint64 // envelopes handed to the Undelivered hook, both ways
	HandshakesRefused uint64 // handshakes that failed or were refused, both ways, but for the tie-break below
	// HandshakesDuplicate: handshakes ended by the simultaneous-dial
	// tie-break or the duplicate check (ErrDuplicateConnection: the peers
	// have, or are opening, another connection), both ways; a few at every
	// start and restart of a healthy cluster, no bad peer involved. The
	// EventHandshakeRefused of each still comes, with that error.
	HandshakesDuplicate uint64
	ProtocolErrors      uint64 // established connections closed for bad frames
	QueueFull           uint64 // envelopes Send refused because their peer's queue was full
	QueuedBytes         int64  // estimated bytes of the envelopes queued for all peers now
	Connections         int64  // established connections now open
	InboundRefused      uint64 // inbound handshakes refused at Config.MaxInboundConnections (also in HandshakesRefused)
	Inbound             int64  // inbound connections now established or admitted in a handshake
	Endpoints           int    // peer addresses with an endpoint now (queue, connection or reconnect state)
	DialsDeferred       uint64 // dials the dial budget (Config.DialBudget) deferred to their next backoff slot
	AnswersDropped      uint64 // runtime answers (a DeadLetterResponse, a Terminated for a missing process) to an address without an endpoint, dropped instead of dialled
	// Remote extension only:
	WatchesRefused        uint64 // peers' WatchRequests refused at Config.MaxWatchesPerPeer (answered with TerminatedWatchRefused)
	WatchesRefusedByPeers uint64 // watches of local watchers that the watchee's node refused at its bound (the watcher got Terminated{AddressTerminated})
	// FutureAnswersUnmatched: answers from peers to a future ID that names
	// no pending future (late, or made up: ErrNoSuchFuture).
	FutureAnswersUnmatched uint64
	// SpawnsRefused: peers' SpawnRequests refused at Config.MaxSpawnsPerPeer.
	SpawnsRefused uint64
	// BacklogRefused: user messages from peers refused because their
	// target's mailbox held Config.MaxMailboxBacklog or more; those of a
	// frame's runs are added once the frame has been delivered, as
	// EnvelopesReceived is.
	BacklogRefused uint64
}

// NewNode validates cfg and returns a Node that is not listening yet.
func NewNode(cfg Config, hooks Hooks, opts ...Option) (*Node, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := &Node{
		cfg: cfg, hooks: hooks, ser: cfg.Serializers, log: cfg.Logger, id: cfg.NodeID,
		endpoints: map[string]*endpoint{}, peerIDs: map[string]string{}, retired: map[string]*retiredPeer{}, gone: map[string]*goneRecord{}, peersCap: maxKnownPeers, raws: map[net.Conn]rawState{},
		stopping: make(chan struct{}), closed: make(chan struct{}),
		dials:      rate.NewLimiter(rate.Limit(cfg.dialBudget()), cfg.dialBudget()),
		maxBacklog: cfg.maxMailboxBacklog(),
	}
	for _, o := range opts {
		o(n)
	}
	if n.tr == nil {
		n.tr = &TCPTransport{ServerTLS: cfg.ServerTLS, ClientTLS: cfg.ClientTLS}
	}
	if n.bl == nil {
		n.bl = NewBlockList()
	}
	if n.ser == nil {
		n.ser = NewSerializers()
	}
	if n.log == nil {
		n.log = slog.New(slog.DiscardHandler)
	}
	if n.clock == nil {
		n.clock = scheduler.SystemClock{}
	}
	var err error
	if n.metrics, err = newNodeMetrics(n.mp); err != nil {
		return nil, err
	}
	if n.id == "" {
		var b [16]byte
		_, _ = crand.Read(b[:]) // crypto/rand.Read never fails (Go ≥ 1.24)
		n.id = hex.EncodeToString(b[:])
	}
	return n, nil
}

// Start listens on cfg.ListenAddress and starts accepting peers. It may be
// called once. Without cfg.AdvertisedAddress, a listener whose address
// lacks a host or a port fails it with ErrInvalidConfig.
func (n *Node) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != stateNew {
		return fmt.Errorf("%w: Start called twice or after Close", ErrStopped)
	}
	ln, err := n.tr.Listen(ctx, n.cfg.ListenAddress)
	if err != nil {
		return err
	}
	// The address is this node's only once Start succeeds: a failed Start
	// leaves Address() "" (TestFailedStartLeavesNoAddress).
	addr := n.cfg.AdvertisedAddress
	if addr == "" {
		addr = ln.Addr().String()
		if !isHostPort(addr) {
			// Peers would refuse every hello (decodeHello): a listener
			// on ":0" of a transport that names no host (MemoryNetwork
			// gives ":<port>") needs an AdvertisedAddress
			// (TestStartRefusesAnAddressPeersRefuse).
			_ = ln.Close()
			return fmt.Errorf("%w: the listener's address %q is not host:port; set AdvertisedAddress", ErrInvalidConfig, addr)
		}
		if host, _, _ := net.SplitHostPort(addr); net.ParseIP(host).IsUnspecified() {
			// A listener on all interfaces ("0.0.0.0:7000", ":0") is bound
			// to "[::]:<port>": a node on another host that dials it
			// reaches itself, and every PID of this node would carry it
			// (TestStartRefusesAnUnspecifiedAddress).
			_ = ln.Close()
			return fmt.Errorf("%w: the listener's address %q is the unspecified address (all interfaces), which other nodes cannot dial; set AdvertisedAddress to an address they can", ErrInvalidConfig, addr)
		}
	}
	n.addr = addr
	if n.metrics != nil {
		reg, err := n.metrics.register(n)
		if err != nil {
			_ = ln.Close()
			n.addr = ""
			return err
		}
		n.metricsReg = reg
	}
	n.ln = ln
	runCtx, cancel := context.WithCancel(context.Background())
	n.cancelRun = cancel
	n.unsub = n.bl.Subscribe(n.onBlockEvent)
	n.state = stateRunning
	n.running.Store(true)
	n.wg.Go(func() { n.acceptLoop(runCtx) })
	n.log.Debug("remote: node started", "address", n.addr, "node", n.id)
	return nil
}

// Address returns the advertised address ("" before Start).
func (n *Node) Address() string {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.addr
}

// NodeID returns this incarnation's node ID.
func (n *Node) NodeID() string { return n.id }

// BlockList returns the BlockList the Node enforces.
func (n *Node) BlockList() *BlockList { return n.bl }

// Serializers returns the registry the Node serializes with.
func (n *Node) Serializers() *Serializers { return n.ser }

// Stats returns a snapshot of the counters.
func (n *Node) Stats() Stats {
	return Stats{
		EnvelopesSent: n.stats.envelopesSent.Load(), EnvelopesReceived: n.stats.envelopesReceived.Load(),
		FramesSent: n.stats.framesSent.Load(), FramesReceived: n.stats.framesReceived.Load(),
		Undelivered: n.stats.undelivered.Load(), HandshakesRefused: n.stats.handshakesRefused.Load(), HandshakesDuplicate: n.stats.handshakesDuplicate.Load(),
		ProtocolErrors: n.stats.protocolErrors.Load(), QueueFull: n.stats.queueFull.Load(),
		QueuedBytes: n.queuedBytes(), Connections: n.stats.connections.Load(),
		InboundRefused: n.stats.inboundRefused.Load(), Inbound: n.inboundConns.Load(), Endpoints: n.endpointCount(),
		DialsDeferred: n.stats.dialsDeferred.Load(), AnswersDropped: n.stats.answersDropped.Load(),
		WatchesRefused: n.stats.watchesRefused.Load(), WatchesRefusedByPeers: n.stats.watchesRefusedByPeers.Load(),
		FutureAnswersUnmatched: n.stats.futureAnswersUnmatched.Load(), SpawnsRefused: n.stats.spawnsRefused.Load(),
		BacklogRefused: n.stats.backlogRefused.Load(),
	}
}

// endpointCount is the number of endpoints.
func (n *Node) endpointCount() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.endpoints)
}

// queuedBytes sums the estimated bytes queued for every peer (an endpoint
// outside the snapshot was never sent to: it has nothing queued).
func (n *Node) queuedBytes() int64 {
	var b int64
	if m := n.epSnap.Load(); m != nil {
		for _, ep := range *m {
			b += ep.q.bytesPending()
		}
	}
	return b
}

// Send queues env for the node at address, connecting lazily, or, when the
// connection is idle, writes it at once on the calling goroutine (a direct
// write, see docs/remote.md). It never waits for a lock or for the peer to
// read; a direct write waits only while the kernel's socket buffer is full,
// at most WriteTimeout. It checks that env.Message's type is registered
// (ErrUnknownType); the endpoint's writer encodes a queued message later,
// so it must not change after Send. Every envelope that will not be written
// to a connection (this call's error, or later: queue dropped at give-up,
// peer blocked, node closing, an encoding error) is handed exactly once to
// the Undelivered hook; the returned error is the same one, for callers
// that want to react at once, and is nil when the envelope was queued or
// written. Envelopes sent to one address are written in Send order.
func (n *Node) Send(address string, env Envelope) error {
	msg := env.Message
	if env.Header != nil {
		msg = &actor.MessageEnvelope{Header: env.Header, Message: msg}
	}
	return n.send(address, refPID(env.Target), refPID(env.Sender), msg, sendLocal)
}

// send is Send with the target and sender as PIDs (nil: none), which the
// queue holds as they are: the actor runtime's path, without a PIDRef copy,
// for a message of class cls. An *actor.MessageEnvelope is sent as the
// message it carries, with its header.
func (n *Node) send(address string, target, sender *actor.PID, msg any, cls sendClass) error {
	body, h := actor.UnwrapEnvelope(msg)
	codec, err := n.ser.codecFor(body)
	if err != nil {
		return n.sendFailed(address, target, sender, msg, err)
	}
	item := outItem{target: target, sender: sender, msg: msg, codec: codec, size: codec.estimate(body)}
	if h != nil {
		item.size += int64(headerEncodedLen(h))
	}
	if err := item.check(n.cfg.MaxFrameSize); err != nil {
		return n.sendFailed(address, target, sender, msg, err)
	}
	if n.bl.active() {
		n.mu.Lock()
		id := n.peerIDs[address]
		n.mu.Unlock()
		if n.bl.IsBlocked(address, id) {
			return n.sendFailed(address, target, sender, msg, fmt.Errorf("%w: %q", ErrBlocked, address))
		}
	}
	// The common case takes no lock: a live endpoint from the snapshot.
	if ep := n.liveEndpoint(address); ep != nil {
		if cls == sendLocal && !ep.local.Load() && ep.markLocal() { // once per endpoint
			n.mu.Lock()
			n.replyDone(ep)
			n.mu.Unlock()
		}
		switch err := ep.enqueue(item); {
		case err == nil:
			return nil
		case !errors.Is(err, errEndpointGone):
			return n.sendFailed(address, target, sender, msg, err)
		}
	}
	for range 8 {
		ep, err := n.endpointFor(address, true, cls)
		if ep == nil && err == nil { // an answer to an address without an endpoint
			n.stats.answersDropped.Add(1)
			return nil
		}
		if err != nil {
			return n.sendFailed(address, target, sender, msg, err)
		}
		switch err := ep.enqueue(item); {
		case err == nil:
			return nil
		case errors.Is(err, errEndpointGone):
			continue // terminated meanwhile; the next lookup makes a new one
		default:
			return n.sendFailed(address, target, sender, msg, err)
		}
	}
	return n.sendFailed(address, target, sender, msg, fmt.Errorf("%w: endpoint for %q keeps terminating", ErrStopped, address))
}

// refPID is the PID of a wire reference (nil for the zero one).
func refPID(r PIDRef) *actor.PID {
	if r.IsZero() {
		return nil
	}
	return actor.NewPID(r.Address, r.ID)
}

// wireRef is the wire reference of p: a PID made before the Node had an
// address (actor.LocalAddress) carries this node's address, so that peers
// can answer it.
func (n *Node) wireRef(p *actor.PID) PIDRef {
	if p == nil {
		return PIDRef{}
	}
	if p.Address == actor.LocalAddress {
		return PIDRef{Address: n.addr, ID: p.ID}
	}
	return PIDRef{Address: p.Address, ID: p.ID}
}

// sendFailed reports an envelope that Send refused and returns err.
func (n *Node) sendFailed(address string, target, sender *actor.PID, msg any, err error) error {
	body, h := actor.UnwrapEnvelope(msg)
	env := Envelope{Target: n.wireRef(target), Sender: n.wireRef(sender), Header: h, Message: body}
	n.undelivered(Undelivered{Peer: Peer{Address: address}, Envelope: env, Err: err})
	return err
}

// liveEndpoint returns the endpoint for address from the lock-free
// snapshot, or nil (none yet, none this node has sent to, or the Node is
// not running).
func (n *Node) liveEndpoint(address string) *endpoint {
	if !n.running.Load() {
		return nil
	}
	if m := n.epSnap.Load(); m != nil {
		return (*m)[address]
	}
	return nil
}

// publishEndpoints refreshes the snapshot liveEndpoint reads: the
// endpoints this node has sent to (endpoint.used). n.mu held.
func (n *Node) publishEndpoints() {
	m := make(map[string]*endpoint, len(n.endpoints))
	for a, ep := range n.endpoints {
		if ep.used.Load() {
			m[a] = ep
		}
	}
	n.epSnap.Store(&m)
}

// endpointFor returns the live endpoint for address, creating it (and its
// goroutine) if needed. local (a Send, not an inbound handshake) marks it
// used, and of class cls: a sendLocal marks it local; for a sendAnswer
// it returns nil, nil rather than create one; for a sendReply it creates
// one only while fewer than Config.MaxInboundConnections endpoints made so
// wait to connect (ErrTooManyEndpoints). Why: an endpoint is a goroutine
// and a queue until it connects or gives up (GiveUpAfter), and a peer can
// name a new address as the sender of each message it sends, so without a
// bound it made this node hold as many endpoints as it named within
// GiveUpAfter; the dial budget bounds their dials, not their number
// (TestReplyEndpointsBounded).
func (n *Node) endpointFor(address string, local bool, cls sendClass) (*endpoint, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.state != stateRunning {
		return nil, ErrStopped
	}
	if address == n.addr {
		return nil, fmt.Errorf("%w: %q is this node's own address", ErrIdentityMismatch, address)
	}
	if ep := n.endpoints[address]; ep != nil {
		if local && !ep.used.Load() {
			ep.used.Store(true)
			n.publishEndpoints()
		}
		if local && cls == sendLocal && ep.markLocal() {
			n.replyDone(ep)
		}
		return ep, nil
	}
	if local && cls == sendAnswer {
		return nil, nil
	}
	if err := checkAddress(address); err != nil {
		return nil, err
	}
	reply := local && cls == sendReply
	if limit := n.cfg.maxInbound(); reply && n.replyWaiting >= limit {
		return nil, fmt.Errorf("%w: %d endpoints for addresses peers named wait to connect (Config.MaxInboundConnections %d); %q refused",
			ErrTooManyEndpoints, n.replyWaiting, limit, address)
	}
	ep := newEndpoint(n, address)
	ep.used.Store(local)
	ep.local.Store(local && cls == sendLocal)
	if reply {
		ep.replyWaiting = true
		n.replyWaiting++
	}
	// The last endpoint here was retired unused (retireUnused): a new node
	// ID on this one's connection is still reported as a restart.
	n.takeRetired(ep)
	ctx, cancel := context.WithCancel(context.Background())
	ep.cancel = cancel
	n.endpoints[address] = ep
	if local { // an unused endpoint is not in the snapshot: no copy per claim
		n.publishEndpoints()
	}
	n.wg.Go(func() { ep.run(ctx) })
	return ep, nil
}

// checkAddress refuses, with ErrInvalidAddress, an address no dial can
// reach: not host:port, or an empty host or port. A node's address has
// both (isHostPort: peers refuse a hello without), so no node answers at
// such an address. Without it a PID such as "nohost/x" made an endpoint
// that was redialled until GiveUpAfter, and a request to it failed only at
// its deadline, as a timeout (TestRequestToMalformedAddressFailsAtOnce).
func checkAddress(address string) error {
	host, port, err := net.SplitHostPort(address)
	switch {
	case err != nil:
		return fmt.Errorf("%w: %q: %v", ErrInvalidAddress, address, err)
	case host == "":
		return fmt.Errorf("%w: %q: no host", ErrInvalidAddress, address)
	case port == "":
		return fmt.Errorf("%w: %q: no port", ErrInvalidAddress, address)
	}
	return nil
}

// replyDone stops counting ep among the endpoints made for an address a
// peer named that wait to connect (endpointFor): it connected, local code
// sent to it, or it is gone. n.mu held.
func (n *Node) replyDone(ep *endpoint) {
	if ep.replyWaiting {
		ep.replyWaiting = false
		n.replyWaiting--
	}
}

// removeEndpoint removes ep, which has ended (its termErr is set), from
// the Node. When ep's end reports its peer terminated while the peer may
// live on (markGone), the record is made here, in the same critical
// section: a connection of that incarnation made afterwards comes to a new
// endpoint, whose writer finds the record. It returns the record (made
// now or by an earlier call for ep), for exit to mark reported.
func (n *Node) removeEndpoint(ep *endpoint) *goneRecord {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.replyDone(ep)
	n.releaseRetired(ep)
	if n.endpoints[ep.addr] == ep {
		delete(n.endpoints, ep.addr)
		if ep.used.Load() {
			n.publishEndpoints()
		}
	}
	if ep.gone == nil && n.state == stateRunning {
		ep.mu.Lock()
		reason, id := ep.termErr, ep.peer
		ep.mu.Unlock()
		ep.gone = n.markGone(ep.addr, id, reason)
	}
	return ep.gone
}

// rawState is what Close needs to know about an open socket.
type rawState uint8

const (
	rawInboundHandshake  rawState = iota // accepted, handshake running: closed when Close begins
	rawOutboundHandshake                 // dialed, handshake running: may finish during the grace period
	rawEstablished                       // closed by its endpoint after goodbye
)

// track registers an open socket so Close can force it shut. It refuses
// (and closes the socket) an inbound socket once the Node is closing, and
// any socket once the grace period is over.
func (n *Node) track(raw net.Conn, st rawState) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.forced || n.state == stateClosed || (st == rawInboundHandshake && n.state != stateRunning) {
		closeStream(raw, true)
		return false
	}
	n.raws[raw] = st
	return true
}

// markEstablished records that ep's connection on raw, to peer, is
// established.
func (n *Node) markEstablished(ep *endpoint, raw net.Conn, peer hello) {
	n.mu.Lock()
	n.replyDone(ep)
	n.releaseRetired(ep)
	n.rememberPeer(peer)
	if _, ok := n.raws[raw]; ok {
		n.raws[raw] = rawEstablished
	}
	n.mu.Unlock()
}

// maxKnownPeers bounds Node.peerIDs before it forgets idle peers.
const maxKnownPeers = 4096

// rememberPeer records the node ID at peer's address, which Send checks
// against the BlockList. The table is bounded: a party that completes
// handshakes under ever new addresses (possible under plain TCP or one-way
// TLS) would otherwise grow it for the Node's life. At peersCap entries
// it forgets, all at once, the addresses with no endpoint whose node ID is
// not blocked: a blocked one keeps refusing Send at once, and an address
// that connects again is remembered again by its handshake. Only a node
// blocked after its address was forgotten is refused later, by the
// handshake of the next connection, instead of by Send
// (TestPeerIDsBounded). n.mu held.
func (n *Node) rememberPeer(peer hello) {
	if prev := n.peerIDs[peer.Address]; prev != "" && prev != peer.NodeID {
		n.forgetGoneAt(prev, peer.Address) // replaced: it will not come back
	}
	if _, ok := n.peerIDs[peer.Address]; !ok && len(n.peerIDs) >= n.peersCap {
		for addr, id := range n.peerIDs {
			if _, live := n.endpoints[addr]; !live && !n.bl.IsBlocked(addr, id) {
				delete(n.peerIDs, addr)
			}
		}
	}
	n.peerIDs[peer.Address] = peer.NodeID
}

// closeRaw closes a tracked socket and forgets it; abort as in
// closeStream.
func (n *Node) closeRaw(raw net.Conn, abort bool) {
	n.mu.Lock()
	delete(n.raws, raw)
	n.mu.Unlock()
	closeStream(raw, abort)
}

// localHandshake returns this node's handshake parameters on raw with
// admit.
func (n *Node) localHandshake(raw net.Conn, admit func(hello) error) *handshake {
	return &handshake{
		local:   hello{Version: ProtocolVersion, SystemName: n.cfg.SystemName, NodeID: n.id, Address: n.addr, MaxFrame: uint64(n.cfg.MaxFrameSize)},
		blocked: func(id, addr string) bool { return n.bl.IsBlocked(id, addr) },
		verify:  n.identityCheck(raw),
		admit:   admit,
	}
}

func (n *Node) acceptLoop(ctx context.Context) {
	backoff := 5 * time.Millisecond
	for {
		raw, err := n.ln.Accept()
		if err != nil {
			select {
			case <-n.stopping:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors and the like: wait a little, then
			// accept again.
			n.log.Warn("remote: accept failed", "err", err)
			t := time.NewTimer(backoff)
			select {
			case <-t.C:
			case <-n.stopping:
				t.Stop()
				return
			}
			backoff = min(2*backoff, time.Second)
			continue
		}
		backoff = 5 * time.Millisecond
		if k := n.inboundHandshakes.Load(); k >= int64(n.cfg.MaxPendingHandshakes) {
			// Refused before a goroutine or a buffer is spent on it. No
			// reject frame: under TLS, writing one would start a TLS
			// handshake.
			remote := remoteAddrOf(raw)
			closeStream(raw, true)
			n.stats.handshakesRefused.Add(1)
			n.log.Debug("remote: connection refused at accept, too many pending handshakes", "remote", remote, "pending", k)
			n.emit(Event{Kind: EventHandshakeRefused, RemoteAddr: remote, Inbound: true,
				Err: fmt.Errorf("%w: %d inbound handshakes pending (Config.MaxPendingHandshakes)", ErrHandshake, k)})
			continue
		}
		if !n.track(raw, rawInboundHandshake) {
			return
		}
		n.inboundHandshakes.Add(1)
		n.wg.Go(func() { n.serveInbound(ctx, raw) })
	}
}

// serveInbound runs the accepting handshake and then the connection's
// reader, on one tracked goroutine.
func (n *Node) serveInbound(ctx context.Context, raw net.Conn) {
	counted := true // in inboundHandshakes until the handshake completed
	defer func() {
		if counted {
			n.inboundHandshakes.Add(-1)
		}
	}()
	remote := remoteAddrOf(raw)
	deadline := time.Now().Add(n.cfg.HandshakeTimeout)
	_ = raw.SetDeadline(deadline)
	if tc, ok := raw.(*tls.Conn); ok {
		hctx, cancel := context.WithDeadline(ctx, deadline)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			n.refused(Peer{}, remote, true, fmt.Errorf("%w: tls: %w", ErrHandshake, err))
			n.closeRaw(raw, false)
			return
		}
	}
	fr := newHandshakeReader(raw)
	var ep *endpoint
	hs := n.localHandshake(raw, func(peer hello) error {
		if err := n.admitInbound(peer.Address); err != nil {
			return err
		}
		e, err := n.admitEndpoint(peer)
		if err != nil {
			n.inboundConns.Add(-1) // counted by admitInbound
			return err
		}
		ep = e
		return nil
	})
	peer, err := hs.accept(fr, raw)
	if err != nil {
		if ep != nil {
			ep.cancelPending()
			n.inboundConns.Add(-1)
		}
		n.refused(Peer{Address: peer.Address, NodeID: peer.NodeID}, remote, true, err)
		n.closeRaw(raw, false)
		return
	}
	n.inboundHandshakes.Add(-1)
	counted = false
	_ = raw.SetDeadline(time.Time{})
	fr.establish(n.cfg.MaxFrameSize)
	c := newConn(raw, fr, peer, true)
	if !ep.install(c) {
		return
	}
	n.readLoop(c)
}

// admitEndpoint applies the connection rules of the endpoint for peer's
// address (made if needed) to an inbound handshake and returns the
// endpoint that admitted it.
func (n *Node) admitEndpoint(peer hello) (*endpoint, error) {
	for range 8 {
		e, err := n.endpointFor(peer.Address, false, sendReply)
		if err != nil {
			return nil, err
		}
		if err = e.admit(peer, true); errors.Is(err, errEndpointGone) {
			continue
		}
		if err != nil {
			return nil, err
		}
		return e, nil
	}
	return nil, fmt.Errorf("%w: endpoint for %q keeps terminating", ErrStopped, peer.Address)
}

// admitInbound counts an inbound handshake claiming address as a
// connection (until closeConn, or its handshake fails), or refuses it with
// ErrTooManyConnections when Config.MaxInboundConnections are counted: the
// bound on what claimed addresses can make this node hold (endpoints,
// connections, goroutines), since under plain TCP or one-way TLS any party
// may claim any address. A claim of an address whose endpoint local code
// has sent to is let in beyond the bound: a peer this node uses is not
// locked out by others filling it (TestInboundCapAdmitsAPeerInUse). Not so
// for an address this node only answered (a sender or watcher a peer
// named): a party could have any number of its addresses answered and then
// claim them all beyond the bound (TestInboundCapNotOpenedByReplies).
func (n *Node) admitInbound(address string) error {
	limit := n.cfg.maxInbound()
	k := n.inboundConns.Add(1)
	if k <= limit {
		return nil
	}
	n.mu.Lock()
	ep := n.endpoints[address]
	n.mu.Unlock()
	if ep != nil && ep.local.Load() {
		return nil
	}
	n.inboundConns.Add(-1)
	n.stats.inboundRefused.Add(1)
	return fmt.Errorf("%w: %d inbound connections (Config.MaxInboundConnections %d)", ErrTooManyConnections, k-1, limit)
}

// refused logs and reports a failed handshake. The duplicate-connection
// tie-break is counted apart and logged at Debug: it happens at every
// start of a healthy cluster, and counted with the refusals it made their
// count useless to alert on (2 to 5 a member in the operations trial;
// TestHandshakeTieBreakIsNotARefusal).
func (n *Node) refused(p Peer, remote string, inbound bool, err error) {
	if errors.Is(err, ErrDuplicateConnection) {
		n.stats.handshakesDuplicate.Add(1)
		n.log.Debug("remote: handshake ended, duplicate connection", "peer", p.String(), "remote", remote, "inbound", inbound, "err", err)
	} else {
		n.stats.handshakesRefused.Add(1)
		n.log.Info("remote: handshake refused", "peer", p.String(), "remote", remote, "inbound", inbound, "err", err)
	}
	n.emit(Event{Kind: EventHandshakeRefused, Peer: p, RemoteAddr: remote, Inbound: inbound, Err: err})
}

func (n *Node) emit(e Event) {
	if n.hooks.Event != nil {
		n.hooks.Event(e)
	}
}

func (n *Node) undelivered(u Undelivered) {
	n.stats.undelivered.Add(1)
	if n.hooks.Undelivered != nil {
		n.hooks.Undelivered(u)
	}
}

// onBlockEvent terminates the endpoints of newly blocked nodes (closing
// their connections); unblocking needs no action.
func (n *Node) onBlockEvent(ev BlockEvent) {
	if !ev.Blocked {
		return
	}
	n.mu.Lock()
	var hit []*endpoint
	for _, ep := range n.endpoints {
		id := ep.peerID()
		for _, k := range ev.Keys {
			if k == ep.addr || (id != "" && k == id) {
				hit = append(hit, ep)
				break
			}
		}
	}
	n.mu.Unlock()
	for _, ep := range hit {
		n.log.Info("remote: peer blocked, closing its connection", "peer", ep.addr)
		ep.terminate(fmt.Errorf("%w: %s", ErrBlocked, ep.addr))
	}
}

// Close stops the Node: it stops accepting, flushes each peer's queue (a
// peer that is connected, being dialed, or not tried yet gets one attempt to
// connect) and says goodbye, hands what could not be sent to the Undelivered
// hook with ErrStopped, and waits for every goroutine. After a goodbye it
// leaves closing the connection to the peer (which closes on reading it),
// for at most the probe timeout (HandshakeTimeout, clamped to at least two
// HeartbeatIntervals and at most HeartbeatTimeout), so that nothing it
// wrote is discarded by a reset. When ctx ends first,
// the remaining connections are closed at once (their queued envelopes
// become Undelivered) and ctx.Err() is returned after the goroutines ended,
// or after WriteTimeout more when one is held in user code (a codec, a
// Transport) that does not return: Terminated closes when it does;
// a ctx that is already done closes every connection without a goodbye, so
// peers see what they would see if the process died.
// Close is idempotent; later Sends fail with ErrStopped.
func (n *Node) Close(ctx context.Context) error {
	n.mu.Lock()
	switch n.state {
	case stateNew:
		n.state = stateClosed
		close(n.stopping)
		close(n.closed)
		n.mu.Unlock()
		return nil
	case stateClosing, stateClosed:
		n.mu.Unlock()
		select {
		case <-n.closed:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	n.state = stateClosing
	n.running.Store(false)
	// Every return below unregisters the metrics' callback, outside n.mu.
	reg := n.metricsReg
	n.metricsReg = nil
	defer n.unregisterMetrics(reg)
	n.stopRetired()
	if ctx.Err() != nil {
		// No grace period: close every socket before anyone can say
		// goodbye, as if the process had died.
		n.forceCloseLocked()
	}
	close(n.stopping)
	var handshaking []net.Conn
	for raw, st := range n.raws {
		if st == rawInboundHandshake {
			handshaking = append(handshaking, raw)
		}
	}
	n.mu.Unlock()

	n.unsub()
	_ = n.ln.Close()
	n.cancelRun()
	for _, raw := range handshaking {
		closeStream(raw, true)
	}
	done := make(chan struct{})
	go func() { n.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = ctx.Err()
		n.forceClose()
		// Every socket is closed and every dial abandoned: the goroutines
		// return at once, unless one is in user code that does not (a
		// codec's decode or encode, a Transport's Dial). That wait is
		// bounded by WriteTimeout, what a write may block for; past it
		// Close returns and the rest is finished when they return
		// (Terminated), so that a system's Shutdown is not held past its
		// ctx for good (TestShutdownBoundedByABlockedCodec).
		grace := time.NewTimer(n.cfg.WriteTimeout)
		defer grace.Stop()
		select {
		case <-done:
		case <-grace.C:
			go func() { //nolint: tracked by Terminated
				<-done
				n.finishClose()
			}()
			return fmt.Errorf("%w (goroutines still in user code: a codec or a Transport that does not return)", err)
		}
	}
	n.finishClose()
	return err
}

// finishClose marks the Node closed once its goroutines have returned.
func (n *Node) finishClose() {
	n.mu.Lock()
	n.state = stateClosed
	n.mu.Unlock()
	close(n.closed)
	n.log.Debug("remote: node closed", "address", n.addr)
}

// Terminated returns a channel closed once Close has run to its end and
// every goroutine of the Node has returned.
func (n *Node) Terminated() <-chan struct{} { return n.closed }

// forceClose ends the grace period: every socket closes and every dial is
// abandoned.
func (n *Node) forceClose() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.forceCloseLocked()
}

func (n *Node) forceCloseLocked() {
	n.forced = true
	for raw := range n.raws {
		closeStream(raw, true)
	}
	for _, ep := range n.endpoints {
		ep.cancel()
	}
}
