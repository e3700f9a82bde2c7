package remote

import "fmt"

// Peer identifies a remote node: its advertised address and, once a
// handshake has happened, the node ID of its incarnation.
type Peer struct {
	Address string
	NodeID  string
}

func (p Peer) String() string {
	if p.NodeID == "" {
		return p.Address
	}
	return p.Address + "(" + p.NodeID + ")"
}

// Undelivered describes an envelope that did not make it: outbound (queue
// overflow, blocked peer, peer terminated, connection lost mid-write, node
// stopping) or inbound (unknown message type, undecodable payload).
type Undelivered struct {
	Peer     Peer
	Inbound  bool
	Envelope Envelope // Message is nil for an inbound payload that could not be decoded
	TypeName string   // the wire type name (useful when Message is nil)
	Err      error    // why; wraps one of the package sentinels
}

// EventKind classifies an Event.
type EventKind uint8

// Event kinds.
const (
	// EventConnected: a handshake completed; Peer is the other node.
	EventConnected EventKind = iota + 1
	// EventDisconnected: an established connection closed; Err says why.
	EventDisconnected
	// EventHandshakeRefused: a handshake failed or was refused, by either
	// side (wrong version or system name, blocked, TLS failure, timeout,
	// garbage); Err says why. Peer may be partly unknown.
	EventHandshakeRefused
	// EventProtocolError: an established connection received bytes that
	// break the protocol (malformed, truncated, oversize frame); that
	// connection alone is closed.
	EventProtocolError
	// EventUnknownType: an inbound envelope of an unregistered type was
	// refused (the connection stays up).
	EventUnknownType
	// EventDialFailed: a connection attempt failed; the endpoint backs off.
	EventDialFailed
	// EventPeerTerminated: a peer incarnation is considered gone (give-up,
	// goodbye, restart, blocked, or, with the remote extension, a peer
	// that watched local processes, that this node never sent to, and
	// that has not come back within GiveUpAfter of its connection's end);
	// Err is ErrPeerUnreachable, ErrPeerShutdown, ErrPeerRestarted or
	// ErrBlocked.
	EventPeerTerminated
	// EventQueueFull: a peer's outbound queue became full (OutboundQueueSize
	// or OutboundQueueBytes) and Send refused an envelope with
	// ErrQueueFull. It is reported once per episode: again only after the
	// queue drained below half of both bounds. Every refused envelope goes
	// to Undelivered and is counted in Stats.QueueFull.
	EventQueueFull
)

func (k EventKind) String() string {
	switch k {
	case EventConnected:
		return "connected"
	case EventDisconnected:
		return "disconnected"
	case EventHandshakeRefused:
		return "handshake-refused"
	case EventProtocolError:
		return "protocol-error"
	case EventUnknownType:
		return "unknown-type"
	case EventDialFailed:
		return "dial-failed"
	case EventPeerTerminated:
		return "peer-terminated"
	case EventQueueFull:
		return "queue-full"
	}
	return fmt.Sprintf("event(%d)", uint8(k))
}

// Event reports a transport-level occurrence, for the event stream and for
// tests.
type Event struct {
	Kind       EventKind
	Peer       Peer   // as far as known
	RemoteAddr string // the socket's remote address, when there is a socket
	Inbound    bool   // the connection was accepted (not dialed) by this node
	Err        error
}

// Hooks are the Node's callbacks into the actor runtime. Any of them may be
// nil. They are called on the Node's goroutines (a connection's reader, an
// endpoint's writer, the caller of Send or BlockList.Block, and, for a
// retired watcher's deadline, the goroutine of the Node's clock: the
// timer's own, or the caller of a manual clock's Advance), possibly
// concurrently, and must not block: hand the work to a mailbox. Close
// returns only once every hook call has.
type Hooks struct {
	// Deliver receives each inbound envelope, in the order the peer sent
	// them (per connection), on that connection's reader goroutine.
	Deliver func(from Peer, env Envelope)
	// Undelivered receives, exactly once, every envelope passed to Send
	// that was not written to a connection (refused by Send itself, or
	// dropped later: give-up, block, close, a failed write), and every
	// inbound envelope that could not be decoded. The runtime turns these
	// into dead letters; Send's own error is the same one, for information.
	Undelivered func(u Undelivered)
	// PeerTerminated is called when a peer incarnation is gone: watchers
	// of its PIDs should get Terminated. reason is ErrPeerUnreachable,
	// ErrPeerShutdown, ErrPeerRestarted or ErrBlocked. When an endpoint
	// terminates, it is called before the endpoint's queue goes to
	// Undelivered.
	PeerTerminated func(p Peer, reason error)
	// Event receives transport events (connections, refusals, errors).
	Event func(Event)

	// remote is the Remote extension that made these hooks: the reader
	// hands it decoded envelopes directly (Remote.deliverInbound) rather
	// than through Deliver, which it still serves for everything else.
	remote *Remote
}
