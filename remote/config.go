package remote

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// Limits of Config.MaxFrameSize.
const (
	MinFrameSize = 4 << 10
	MaxFrameSize = 1 << 30

	// defaultMaxFrameSize is DefaultConfig's MaxFrameSize, and what a
	// hello without the field says (see hello.MaxFrame).
	defaultMaxFrameSize = 4 << 20

	// DefaultMaxInboundConnections is what a zero
	// Config.MaxInboundConnections means.
	DefaultMaxInboundConnections = 1024

	// DefaultDialBudget is what a zero Config.DialBudget means: enough for
	// every peer of a cluster of about a thousand nodes to be redialled
	// once per ReconnectBackoffMax (5 s by default) with room to spare.
	DefaultDialBudget = 256

	// DefaultMaxWatchesPerPeer is what a zero Config.MaxWatchesPerPeer
	// means: room for every grain of a large node to be watched from one
	// other node, at some 300 bytes of heap a watch.
	DefaultMaxWatchesPerPeer = 1 << 20

	// DefaultMaxSpawnsPerPeer is what a zero Config.MaxSpawnsPerPeer
	// means: 16 384 live actors spawned by one peer address, some 14 MiB
	// of heap for actors that hold little state of their own and have
	// generated names (a name may take up to 4 KiB more).
	DefaultMaxSpawnsPerPeer = 1 << 14

	// DefaultMaxMailboxBacklog is what a zero Config.MaxMailboxBacklog
	// means: 131 072 user messages waiting in one local actor's mailbox,
	// some 6 MiB of small messages. It is 16 times the most the two-process
	// one-way benchmark keeps in flight (8 192), and a backlog that long
	// is a delay already: an actor that takes a million messages a second
	// needs 0.13 s to reach the last one, one that takes ten thousand 13 s.
	DefaultMaxMailboxBacklog = 1 << 17
)

// Config configures a Node (and, through the actor runtime, the remote
// extension). Start from DefaultConfig and change what you need; NewNode
// calls Validate.
type Config struct {
	// ListenAddress is the host:port to listen on ("127.0.0.1:0" picks a
	// free port).
	ListenAddress string
	// AdvertisedAddress is the address other nodes dial and that PIDs of
	// this node carry, never the unspecified address ("0.0.0.0:7000",
	// "[::]:7000"); empty means the address the listener is bound to,
	// which must then have a host and a port, as peers require of a
	// node's address, and not be the unspecified address of a listener
	// on all interfaces ("0.0.0.0:7000", ":0"), which other hosts cannot
	// dial (else Start fails with ErrInvalidConfig).
	AdvertisedAddress string
	// SystemName is the system/cluster name; nodes with different names
	// refuse each other in the handshake.
	SystemName string
	// NodeID names this process incarnation; empty means a random 128-bit
	// hex ID chosen by NewNode. Two nodes must never share an ID.
	NodeID string

	// ServerTLS, when set, makes the listener speak TLS; set ClientAuth to
	// tls.RequireAndVerifyClientCert (with ClientCAs) for mutual TLS.
	// ClientTLS is used when dialing (RootCAs, and Certificates for mutual
	// TLS); ServerName defaults to the dialed host. Both or neither.
	ServerTLS *tls.Config
	ClientTLS *tls.Config
	// VerifyPeer, when set, decides whether a peer may be the node its
	// hello claims (Peer.Address, Peer.NodeID); cert is the leaf
	// certificate it presented, already verified by TLS, or nil (plain
	// TCP, or no client certificate). It runs on both sides of every
	// handshake, on the handshake's goroutine, after the version, system
	// name and BlockList checks; an error (or a panic) refuses the peer
	// with ErrIdentityMismatch. Nil means VerifyPeerCertificate for a peer
	// with a certificate and no check without one.
	VerifyPeer func(peer Peer, cert *x509.Certificate) error

	// MaxFrameSize bounds a frame body in bytes, in [MinFrameSize,
	// MaxFrameSize]; a larger announced frame closes the connection before
	// anything is allocated, and a larger outbound envelope is refused.
	MaxFrameSize int
	// DialTimeout bounds connecting (TCP and TLS); HandshakeTimeout bounds
	// the hello exchange (and the server-side TLS handshake); WriteTimeout
	// bounds one frame write.
	DialTimeout      time.Duration
	HandshakeTimeout time.Duration
	WriteTimeout     time.Duration
	// HeartbeatInterval is the idle time after which a connection sends a
	// ping; a connection that receives nothing for HeartbeatTimeout is
	// closed. HeartbeatTimeout must exceed HeartbeatInterval.
	HeartbeatInterval time.Duration
	HeartbeatTimeout  time.Duration
	// MaxPendingHandshakes bounds the accepted connections whose handshake
	// (TLS and hello exchange) has not completed; a connection accepted
	// beyond it is closed at once, before anything is read or allocated
	// for it (EventHandshakeRefused, ErrHandshake). At least 1.
	MaxPendingHandshakes int
	// MaxInboundConnections bounds the inbound connections established (or
	// admitted in a handshake) at once; 0 means
	// DefaultMaxInboundConnections. Under plain TCP, one-way TLS, or mutual
	// TLS whose certificates cover whole hosts, a hello may claim any
	// address, and each claimed address holds an endpoint, a connection and
	// two goroutines here while it stays connected: the bound caps what
	// claims can make the node hold. A handshake beyond it is refused
	// (ErrTooManyConnections, reject code 8, Stats.InboundRefused), unless
	// it claims the address of an endpoint local code has sent to (a peer
	// it uses keeps getting in; an address it only answered, a sender or
	// watcher a peer named, does not count). It bounds as well the
	// endpoints made to answer addresses peers named that have not
	// connected yet: an envelope to such an address without an endpoint
	// beyond it fails at once with ErrTooManyEndpoints. Raise it for
	// clusters larger than the default.
	MaxInboundConnections int

	// OutboundQueueSize bounds the envelopes queued per peer, and
	// OutboundQueueBytes their size in bytes (at least MaxFrameSize). Send
	// refuses an envelope that would exceed either bound: it goes to the
	// Undelivered hook with ErrQueueFull, Stats.QueueFull counts it, and an
	// EventQueueFull reports the queue becoming full. Envelopes are queued
	// before they are encoded, so their size is an estimate made by Send:
	// the exact encoded size of a protobuf message, the last encoded size
	// of its type for other codecs, plus a fixed per-envelope overhead.
	OutboundQueueSize  int
	OutboundQueueBytes int64
	// ReconnectBackoffMin and ReconnectBackoffMax bound the exponential
	// backoff between connection attempts (with jitter). A connection lost
	// less than ReconnectBackoffMax after it was established counts as a
	// failed attempt from the second such loss in a row on.
	ReconnectBackoffMin time.Duration
	ReconnectBackoffMax time.Duration
	// GiveUpAfter is how long a peer may stay unreachable before it is
	// reported terminated and its queue dropped.
	GiveUpAfter time.Duration
	// DialBudget bounds, node-wide, the dials per second (and the burst)
	// that others can cause: every dial of an endpoint that only answers
	// to addresses peers named (the sender of a message from the wire, a
	// remote watcher), and the redials of an endpoint local code sent to
	// once one of its dials failed before any reached the address. The
	// first dial to an address that local code sent to takes nothing from
	// it, nor do the redials of such an endpoint after one of its dials
	// reached the node there. A dial that finds the budget empty
	// waits for its next backoff slot (Stats.DialsDeferred) while the
	// give-up clock runs. 0 means DefaultDialBudget. Measured on the
	// Node's clock (WithClock).
	DialBudget int
	// MaxWatchesPerPeer bounds the watches that watchers on one peer
	// address hold on local processes at once (each is an entry in the
	// remote extension's watch table and a watcher in the watched actor);
	// 0 means DefaultMaxWatchesPerPeer. A *WatchRequest beyond it is not
	// taken: the watcher's node is answered with a *TerminatedNotice of
	// reason TerminatedWatchRefused, and its watcher gets
	// Terminated{AddressTerminated} (Stats.WatchesRefused here,
	// Stats.WatchesRefusedByPeers there). A watch ends, and frees its
	// place, on Unwatch, on the watched process's Terminated, and when the
	// peer is reported terminated or says it dropped the watches. Only
	// the remote extension uses it.
	MaxWatchesPerPeer int
	// MaxSpawnsPerPeer bounds the live actors that one peer address has
	// spawned here by remote spawn (Kinds) at once; 0 means
	// DefaultMaxSpawnsPerPeer. A *SpawnRequest beyond it spawns nothing
	// and is answered with a refusal, which the spawner's
	// Remote.SpawnNamed returns as ErrTooManySpawns (Stats.SpawnsRefused
	// here). An actor's stop frees its place; the peer's departure does
	// not (its actors live on). Only the remote extension uses it.
	MaxSpawnsPerPeer int
	// MaxMailboxBacklog bounds the user messages that a local actor's
	// mailbox may hold when a user message from a peer arrives for it; 0
	// means DefaultMaxMailboxBacklog. A message beyond it is refused (load
	// shedding), the connection's reader goes on: it becomes a dead letter
	// with actor.ErrBacklogFull, which wraps actor.ErrMailboxFull, so a
	// request from a peer fails there at once with actor.ErrDeadLetter
	// wrapping actor.ErrMailboxFull (wire reason 6), as when a bounded
	// mailbox refuses (Stats.BacklogRefused, a Warn log at most once a
	// second). It is checked once per run of consecutive messages for one
	// actor (up to 64 of a frame): a run posts what fits and refuses the
	// rest. Messages from local senders, system messages (Watch, Stop)
	// and messages to futures are never refused; a *PoisonPillRequest
	// is (its pill is a user message). It bounds the count, not the
	// bytes: each message is at most MaxFrameSize. math.MaxInt turns it
	// off. Only the remote extension uses it.
	MaxMailboxBacklog int

	// Kinds are the actor kinds this node offers for remote spawn, by name:
	// a peer's Remote.SpawnNamed(ctx, address, name, kind) spawns a
	// top-level actor from these Props here. Names must be non-empty and
	// Props non-nil. Only the remote extension uses them.
	Kinds map[string]*actor.Props
	// Serializers is the message type registry; nil means one with the
	// system messages only.
	Serializers *Serializers
	// Logger receives lifecycle (Debug) and refusal (Info/Warn) logs; nil
	// discards. Payloads are never logged.
	Logger *slog.Logger
}

// maxInbound is MaxInboundConnections with 0 read as the default.
func (c *Config) maxInbound() int64 {
	if c.MaxInboundConnections == 0 {
		return DefaultMaxInboundConnections
	}
	return int64(c.MaxInboundConnections)
}

// dialBudget is DialBudget with 0 read as the default.
func (c *Config) dialBudget() int {
	if c.DialBudget == 0 {
		return DefaultDialBudget
	}
	return c.DialBudget
}

// maxWatchesPerPeer is MaxWatchesPerPeer with 0 read as the default.
func (c *Config) maxWatchesPerPeer() int {
	if c.MaxWatchesPerPeer == 0 {
		return DefaultMaxWatchesPerPeer
	}
	return c.MaxWatchesPerPeer
}

// maxSpawnsPerPeer is MaxSpawnsPerPeer with 0 read as the default.
func (c *Config) maxSpawnsPerPeer() int {
	if c.MaxSpawnsPerPeer == 0 {
		return DefaultMaxSpawnsPerPeer
	}
	return c.MaxSpawnsPerPeer
}

// maxMailboxBacklog is MaxMailboxBacklog with 0 read as the default.
func (c *Config) maxMailboxBacklog() int {
	if c.MaxMailboxBacklog == 0 {
		return DefaultMaxMailboxBacklog
	}
	return c.MaxMailboxBacklog
}

// DefaultConfig returns a Config for a node on loopback with a free port.
func DefaultConfig() Config {
	return Config{
		ListenAddress:         "127.0.0.1:0",
		SystemName:            "fraktor",
		MaxFrameSize:          defaultMaxFrameSize,
		DialTimeout:           5 * time.Second,
		HandshakeTimeout:      5 * time.Second,
		WriteTimeout:          10 * time.Second,
		HeartbeatInterval:     time.Second,
		HeartbeatTimeout:      10 * time.Second,
		MaxPendingHandshakes:  256,
		MaxInboundConnections: DefaultMaxInboundConnections,
		OutboundQueueSize:     8192,
		OutboundQueueBytes:    16 << 20,
		ReconnectBackoffMin:   100 * time.Millisecond,
		ReconnectBackoffMax:   5 * time.Second,
		GiveUpAfter:           30 * time.Second,
		DialBudget:            DefaultDialBudget,
		MaxWatchesPerPeer:     DefaultMaxWatchesPerPeer,
		MaxSpawnsPerPeer:      DefaultMaxSpawnsPerPeer,
		MaxMailboxBacklog:     DefaultMaxMailboxBacklog,
	}
}

// Validate reports every out-of-range field, each wrapped in
// ErrInvalidConfig.
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	if _, _, err := net.SplitHostPort(c.ListenAddress); err != nil {
		bad("ListenAddress %q: %v", c.ListenAddress, err)
	}
	if c.AdvertisedAddress != "" {
		// Peers refuse a hello whose address lacks either part.
		if _, _, err := net.SplitHostPort(c.AdvertisedAddress); err != nil {
			bad("AdvertisedAddress %q: %v", c.AdvertisedAddress, err)
		} else if !isHostPort(c.AdvertisedAddress) {
			bad("AdvertisedAddress %q: a host and a port are needed", c.AdvertisedAddress)
		} else if host, _, _ := net.SplitHostPort(c.AdvertisedAddress); net.ParseIP(host).IsUnspecified() {
			// As Start refuses for a listener's address: every PID would
			// carry it, and a node that dials it reaches itself.
			bad("AdvertisedAddress %q is the unspecified address (all interfaces), which other nodes cannot dial", c.AdvertisedAddress)
		}
		if len(c.AdvertisedAddress) > maxAddressLen {
			bad("AdvertisedAddress longer than %d bytes", maxAddressLen)
		}
	}
	if c.SystemName == "" || len(c.SystemName) > maxSystemNameLen {
		bad("SystemName must be 1..%d bytes", maxSystemNameLen)
	}
	if len(c.NodeID) > maxNodeIDLen {
		bad("NodeID longer than %d bytes", maxNodeIDLen)
	}
	if (c.ServerTLS == nil) != (c.ClientTLS == nil) {
		bad("ServerTLS and ClientTLS must be set together")
	}
	if c.ServerTLS != nil && len(c.ServerTLS.Certificates) == 0 && c.ServerTLS.GetCertificate == nil && c.ServerTLS.GetConfigForClient == nil {
		bad("ServerTLS has no certificate")
	}
	if c.MaxFrameSize < MinFrameSize || c.MaxFrameSize > MaxFrameSize {
		bad("MaxFrameSize %d outside [%d, %d]", c.MaxFrameSize, MinFrameSize, MaxFrameSize)
	}
	for name, d := range map[string]time.Duration{
		"DialTimeout": c.DialTimeout, "HandshakeTimeout": c.HandshakeTimeout, "WriteTimeout": c.WriteTimeout,
		"HeartbeatInterval": c.HeartbeatInterval, "HeartbeatTimeout": c.HeartbeatTimeout,
		"ReconnectBackoffMin": c.ReconnectBackoffMin, "ReconnectBackoffMax": c.ReconnectBackoffMax,
		"GiveUpAfter": c.GiveUpAfter,
	} {
		if d <= 0 {
			bad("%s must be positive, got %v", name, d)
		}
	}
	if c.HeartbeatTimeout <= c.HeartbeatInterval {
		bad("HeartbeatTimeout %v must exceed HeartbeatInterval %v", c.HeartbeatTimeout, c.HeartbeatInterval)
	}
	if c.ReconnectBackoffMax < c.ReconnectBackoffMin {
		bad("ReconnectBackoffMax %v below ReconnectBackoffMin %v", c.ReconnectBackoffMax, c.ReconnectBackoffMin)
	}
	if c.MaxPendingHandshakes < 1 {
		bad("MaxPendingHandshakes must be at least 1, got %d", c.MaxPendingHandshakes)
	}
	if c.MaxInboundConnections < 0 {
		bad("MaxInboundConnections must not be negative (0: the default), got %d", c.MaxInboundConnections)
	}
	if c.DialBudget < 0 {
		bad("DialBudget must not be negative (0: the default), got %d", c.DialBudget)
	}
	if c.MaxWatchesPerPeer < 0 {
		bad("MaxWatchesPerPeer must not be negative (0: the default), got %d", c.MaxWatchesPerPeer)
	}
	if c.MaxSpawnsPerPeer < 0 {
		bad("MaxSpawnsPerPeer must not be negative (0: the default), got %d", c.MaxSpawnsPerPeer)
	}
	if c.MaxMailboxBacklog < 0 {
		bad("MaxMailboxBacklog must not be negative (0: the default), got %d", c.MaxMailboxBacklog)
	}
	if c.OutboundQueueSize < 1 {
		bad("OutboundQueueSize must be at least 1, got %d", c.OutboundQueueSize)
	}
	if c.OutboundQueueBytes < int64(c.MaxFrameSize) {
		bad("OutboundQueueBytes %d below MaxFrameSize %d", c.OutboundQueueBytes, c.MaxFrameSize)
	}
	for k, p := range c.Kinds {
		if k == "" || len(k) > maxSysStringLen || p == nil {
			bad("Kinds: kind %q must be 1..%d bytes with non-nil Props", k, maxSysStringLen)
		}
	}
	return errors.Join(errs...)
}
