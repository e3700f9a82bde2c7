package remote

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns wraps one of them (or is a
// *RejectError, which unwraps to one of them), so callers test with errors.Is.
var (
	// ErrFrameTooLarge: a frame header announced more bytes than the maximum
	// frame size, or an envelope does not fit in one frame.
	ErrFrameTooLarge = errors.New("remote: frame too large")
	// ErrBadVersion: the peer speaks another protocol version.
	ErrBadVersion = errors.New("remote: unsupported protocol version")
	// ErrTruncated: the stream ended in the middle of a frame.
	ErrTruncated = errors.New("remote: truncated frame")
	// ErrMalformed: the bytes are not a valid frame (bad magic, unknown frame
	// kind, reserved flags set, inconsistent lengths, trailing bytes, an
	// unexpected frame kind at this point of the protocol).
	ErrMalformed = errors.New("remote: malformed frame")
	// ErrClusterMismatch: the peer belongs to another system/cluster name.
	ErrClusterMismatch = errors.New("remote: system name mismatch")
	// ErrIdentityMismatch: the node answering at an address is not the one
	// that was dialed (its advertised address differs), it claims our own
	// node ID or address, or its certificate (or Config.VerifyPeer) does not
	// back the identity it claims.
	ErrIdentityMismatch = errors.New("remote: node identity mismatch")
	// ErrBlocked: the peer is on the BlockList.
	ErrBlocked = errors.New("remote: node blocked")
	// ErrUnknownType: a message type that is not registered in the
	// Serializers, on either side.
	ErrUnknownType = errors.New("remote: unknown message type")
	// ErrDuplicateConnection: the peers already have (or are opening) a
	// connection in the other direction that wins the tie-break, or a
	// connection to the claimed address is established (it is probed, and
	// replaced only once it fails the probe or closes).
	ErrDuplicateConnection = errors.New("remote: duplicate connection")
	// ErrHandshake: the handshake failed for a transport reason (timeout, TLS
	// failure, connection closed).
	ErrHandshake = errors.New("remote: handshake failed")
	// ErrTooManyConnections: an inbound handshake was refused because
	// Config.MaxInboundConnections inbound connections are established
	// (or admitted) already.
	ErrTooManyConnections = errors.New("remote: too many inbound connections")
	// ErrTooManyEndpoints: an envelope to an address a peer named (the
	// sender of an inbound message, a remote watcher) that has no endpoint
	// yet was refused because Config.MaxInboundConnections endpoints made
	// for such addresses are waiting to connect.
	ErrTooManyEndpoints = errors.New("remote: too many endpoints waiting to connect")
	// ErrQueueFull: the peer's bounded outbound queue is full.
	ErrQueueFull = errors.New("remote: outbound queue full")
	// ErrStopped: the Node is closing or closed.
	ErrStopped = errors.New("remote: stopped")
	// ErrPeerUnreachable: the peer could not be reached for the configured
	// give-up time.
	ErrPeerUnreachable = errors.New("remote: peer unreachable")
	// ErrPeerShutdown: the peer said goodbye (it is shutting down).
	ErrPeerShutdown = errors.New("remote: peer shut down")
	// ErrPeerRestarted: a new incarnation (another node ID) answers at the
	// peer's address, so the previous incarnation is gone.
	ErrPeerRestarted = errors.New("remote: peer restarted")
	// ErrConnectionLost: the connection failed while a batch was being
	// written; the envelopes of that batch may or may not have arrived.
	ErrConnectionLost = errors.New("remote: connection lost")
	// ErrInvalidAddress: a message for an address that is not host:port
	// (net.SplitHostPort fails, or the host or the port is empty): it
	// could never be dialled, so it is refused at once instead of
	// redialled until GiveUpAfter.
	ErrInvalidAddress = errors.New("remote: invalid address")
	// ErrInvalidConfig: a Config field is out of range.
	ErrInvalidConfig = errors.New("remote: invalid config")
	// ErrAlreadyRegistered: a type or type name is registered twice.
	ErrAlreadyRegistered = errors.New("remote: type already registered")
	// ErrNoListener: the in-memory network has no listener at the address.
	ErrNoListener = errors.New("remote: no listener at address")
	// ErrAddressInUse: the address to listen on is taken (the in-memory
	// network has a listener there, or TCP's bind found it in use; then
	// errors.Is(err, syscall.EADDRINUSE) holds too).
	ErrAddressInUse = errors.New("remote: address in use")
	// ErrUnknownKind: a remote spawn named a kind the target node does not
	// offer (Config.Kinds).
	ErrUnknownKind = errors.New("remote: unknown kind")
	// ErrSpawnFailed: the target node could not spawn the actor for another
	// reason than an unknown kind or a taken name (for example it is
	// shutting down); the error text carries the node's explanation.
	ErrSpawnFailed = errors.New("remote: spawn failed")
	// ErrMisaddressed: an envelope arrived for a process of another address
	// than this node's.
	ErrMisaddressed = errors.New("remote: envelope for another address")
	// ErrCodecPanic: a serializer's code (a user type's MarshalJSON or
	// UnmarshalJSON, a protobuf method) panicked on a message. That
	// envelope alone is refused; the error carries the panic value.
	ErrCodecPanic = errors.New("remote: codec panicked")
	// ErrSerialize: a message's serializer returned an error (for example
	// a protobuf string that is not valid UTF-8, or a MarshalJSON error);
	// the wrapping error names the serializer and type and wraps the
	// serializer's own error. The same message fails alike on every try.
	ErrSerialize = errors.New("remote: serializing failed")
	// ErrNoSuchFuture: a peer sent an answer (a reply, a Terminated, a
	// DeadLetterResponse) to a future ID that names no pending future
	// here: the request completed or timed out before it came, or the ID
	// was made up. Future IDs end in a random tag (actor.IsFutureID), so
	// a peer cannot name a pending future it was not sent.
	ErrNoSuchFuture = errors.New("remote: answer to no pending future")
	// ErrTooManySpawns: the target node refused a remote spawn because
	// the actors that this node's address spawned there and that still
	// live reached its Config.MaxSpawnsPerPeer.
	ErrTooManySpawns = errors.New("remote: too many actors spawned by this peer")
)

// RejectCode says why a handshake was refused; it travels in a reject frame.
type RejectCode uint8

// Reject codes, stable on the wire.
const (
	RejectMalformed RejectCode = iota + 1
	RejectVersion
	RejectCluster
	RejectIdentity
	RejectBlocked
	RejectDuplicate
	RejectStopping
	// RejectBusy: the acceptor holds Config.MaxInboundConnections inbound
	// connections. A node that predates the code reads it as an unreadable
	// reject (RejectMalformed); either way the dialer backs off and retries.
	RejectBusy
)

// sentinel returns the error a reject code stands for.
func (c RejectCode) sentinel() error {
	switch c {
	case RejectVersion:
		return ErrBadVersion
	case RejectCluster:
		return ErrClusterMismatch
	case RejectIdentity:
		return ErrIdentityMismatch
	case RejectBlocked:
		return ErrBlocked
	case RejectDuplicate:
		return ErrDuplicateConnection
	case RejectStopping:
		return ErrStopped
	case RejectBusy:
		return ErrTooManyConnections
	default:
		return ErrMalformed
	}
}

// rejectCodeOf maps an error to the code sent to the peer.
func rejectCodeOf(err error) RejectCode {
	switch {
	case errors.Is(err, ErrBadVersion):
		return RejectVersion
	case errors.Is(err, ErrClusterMismatch):
		return RejectCluster
	case errors.Is(err, ErrIdentityMismatch):
		return RejectIdentity
	case errors.Is(err, ErrBlocked):
		return RejectBlocked
	case errors.Is(err, ErrDuplicateConnection):
		return RejectDuplicate
	case errors.Is(err, ErrStopped):
		return RejectStopping
	case errors.Is(err, ErrTooManyConnections):
		return RejectBusy
	default:
		return RejectMalformed
	}
}

// RejectError is returned by a handshake that the peer refused. It unwraps to
// the sentinel matching Code, so errors.Is(err, ErrClusterMismatch) works on
// the refused side too.
type RejectError struct {
	Code   RejectCode
	Reason string // the peer's explanation, for logs; never trusted
}

func (e *RejectError) Error() string {
	return fmt.Sprintf("remote: handshake rejected by peer (%v): %q", e.Code.sentinel(), e.Reason)
}

// Unwrap returns the sentinel for e.Code.
func (e *RejectError) Unwrap() error { return e.Code.sentinel() }
