package remote

import (
	"errors"
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
)

// SystemMessage marks the runtime's own remote protocol messages. They are
// serialized by a compact built-in encoding (serializer SerializerSystem),
// need no registration, and are always sent and delivered as pointers
// (*WatchRequest, *TerminatedNotice, ...).
type SystemMessage interface{ remoteSystemMessage() }

// WatchRequest asks the node of Watchee to send a TerminatedNotice to
// Watcher when Watchee stops (the wire form of actor.Watch).
type WatchRequest struct{ Watcher, Watchee PIDRef }

// UnwatchRequest cancels a WatchRequest (the wire form of actor.Unwatch).
type UnwatchRequest struct{ Watcher, Watchee PIDRef }

// TerminatedNotice tells a watcher that Who has stopped; Why is one of the
// Terminated* reasons (the wire form of actor.Terminated).
type TerminatedNotice struct {
	Who PIDRef
	Why uint8
}

// Reasons carried by TerminatedNotice.Why.
const (
	TerminatedStopped            uint8 = 0 // the process stopped
	TerminatedAddressTerminated  uint8 = 1 // its node is gone
	TerminatedNotFound           uint8 = 2 // no such process when the watch arrived
	TerminatedAddressUnreachable uint8 = 3 // its node is unreachable (give-up)
	// TerminatedWatchRefused: the watch was not taken, because the
	// watchers at the watcher's address already hold
	// Config.MaxWatchesPerPeer watches on that node; Who has not
	// necessarily stopped. The watcher's node delivers it as
	// actor.TerminatedAddressTerminated (a node that predates it: as
	// actor.TerminatedStopped).
	TerminatedWatchRefused uint8 = 4
)

// SpawnRequest asks a node to spawn an actor of a kind it offers for remote
// spawn; Name may be empty (the node picks one).
type SpawnRequest struct {
	Name      string
	Kind      string
	RequestID uint64
}

// SpawnResponse answers a SpawnRequest with the same RequestID: the new PID,
// or Err (non-empty) when the spawn failed.
type SpawnResponse struct {
	RequestID uint64
	PID       PIDRef
	Err       string
}

// Ping is a liveness probe carried as an ordinary message; Pong answers it
// with the same Seq. Neither needs registration.
type Ping struct{ Seq uint64 }

// Pong answers Ping.
type Pong struct{ Seq uint64 }

// StopRequest stops the envelope's target at once (the wire form of
// actor.Stop).
type StopRequest struct{}

// PoisonPillRequest stops the envelope's target after the messages queued
// before it (the wire form of *actor.PoisonPill, a user message).
type PoisonPillRequest struct{}

// DeadLetterResponse tells the envelope's target, typically a future
// waiting for an answer, that a message did not make it, so the request
// fails at once: the target's own message to Target, because Target does
// not exist or (Reason) its node could not decode the message; or a
// message from Target to it (a reply) that Target's node could not encode
// (Reason).
type DeadLetterResponse struct {
	Target PIDRef
	// Reason is DeadLetterNoTarget, or why the message could not be
	// decoded or encoded on Target's node. On the wire it follows Target
	// only when it is not zero: a node that predates it reads the common
	// answer as before (and refuses the rare other one as malformed).
	Reason DeadLetterReason
}

// WatchesDropped tells the receiver that the sender has reported the
// receiver's incarnation NodeID terminated (it was unreachable for the
// sender's GiveUpAfter, or blocked) and so dropped every watch across the
// link: the sender's watchers of the receiver's processes were told
// Terminated{AddressTerminated}, and the receiver's watchers of the
// sender's processes will never hear from them. The receiver ends its own
// side of those watches as if the sender's node had been lost: its
// watchers of the sender's processes get Terminated{AddressTerminated},
// the sender is sent an UnwatchRequest for each, and its processes forget
// the sender's watchers. A notice naming another node ID is ignored.
//
// The Remote extension sends it, unasked, as its first envelope on the
// first connection that incarnation makes again (same node ID: a long
// partition, a paused process, an unblocked node), so that it precedes
// every watch the sender makes on that connection. Its target is the
// receiver's address with an empty ID. A node that predates it reads its
// tag as an unknown system message type: a dead letter there, the
// connection stays, and its watchers stay silent as before.
type WatchesDropped struct{ NodeID string }

// DeadLetterReason says why a message sent to another node was not
// delivered there; stable on the wire.
type DeadLetterReason uint8

// Dead letter reasons. A receiver that does not know a reason reads it as
// DeadLetterNoTarget.
const (
	// DeadLetterNoTarget: the target process does not exist (never did,
	// or stopped).
	DeadLetterNoTarget DeadLetterReason = iota
	// DeadLetterUnknownType: the message's type is not registered in the
	// Serializers of the target's node (ErrUnknownType).
	DeadLetterUnknownType
	// DeadLetterCodecPanic: the type's codec panicked on the payload
	// there (ErrCodecPanic).
	DeadLetterCodecPanic
	// DeadLetterMalformed: the payload's bytes did not decode there
	// (ErrMalformed).
	DeadLetterMalformed
	// DeadLetterSerialize: a message to the envelope's target (a reply)
	// could not be encoded on Target's node: its serializer returned an
	// error (ErrSerialize).
	DeadLetterSerialize
	// DeadLetterFrameTooLarge: a message to the envelope's target did not
	// fit in a frame on Target's node (ErrFrameTooLarge).
	DeadLetterFrameTooLarge
	// DeadLetterMailboxFull: Target's bounded mailbox refused or dropped
	// the message (actor.ErrMailboxFull).
	DeadLetterMailboxFull
)

// deadLetterReason is the wire reason of a dead letter whose local reason
// is err: a payload that could not be decoded, else DeadLetterNoTarget.
func deadLetterReason(err error) DeadLetterReason {
	switch {
	case err == nil:
		return DeadLetterNoTarget
	case errors.Is(err, ErrUnknownType):
		return DeadLetterUnknownType
	case errors.Is(err, ErrCodecPanic):
		return DeadLetterCodecPanic
	case errors.Is(err, ErrMalformed):
		return DeadLetterMalformed
	case errors.Is(err, ErrSerialize):
		return DeadLetterSerialize
	case errors.Is(err, ErrFrameTooLarge):
		return DeadLetterFrameTooLarge
	case errors.Is(err, actor.ErrMailboxFull):
		return DeadLetterMailboxFull
	}
	return DeadLetterNoTarget
}

// Err returns the sentinel error of a reason that a payload could not be
// decoded, and nil for DeadLetterNoTarget and reasons unknown here.
func (r DeadLetterReason) Err() error {
	switch r {
	case DeadLetterUnknownType:
		return ErrUnknownType
	case DeadLetterCodecPanic:
		return ErrCodecPanic
	case DeadLetterMalformed:
		return ErrMalformed
	case DeadLetterSerialize:
		return ErrSerialize
	case DeadLetterFrameTooLarge:
		return ErrFrameTooLarge
	case DeadLetterMailboxFull:
		return actor.ErrMailboxFull
	}
	return nil
}

func (*WatchRequest) remoteSystemMessage()       {}
func (*UnwatchRequest) remoteSystemMessage()     {}
func (*TerminatedNotice) remoteSystemMessage()   {}
func (*SpawnRequest) remoteSystemMessage()       {}
func (*SpawnResponse) remoteSystemMessage()      {}
func (*Ping) remoteSystemMessage()               {}
func (*Pong) remoteSystemMessage()               {}
func (*StopRequest) remoteSystemMessage()        {}
func (*PoisonPillRequest) remoteSystemMessage()  {}
func (*DeadLetterResponse) remoteSystemMessage() {}
func (*WatchesDropped) remoteSystemMessage()     {}

// Tags of the compact system encoding: the first payload byte.
const (
	sysWatch byte = iota + 1
	sysUnwatch
	sysTerminated
	sysSpawnRequest
	sysSpawnResponse
	sysPing
	sysPong
	sysStop
	sysPoisonPill
	sysDeadLetterResponse
	sysWatchesDropped
)

const maxSysStringLen = 4096

func appendPIDRef(dst []byte, p PIDRef) []byte {
	return appendString(appendString(dst, p.Address), p.ID)
}

func (c *cursor) pidRef() PIDRef {
	a := c.str("address", maxAddressLen)
	return PIDRef{Address: a, ID: c.str("id", maxIDLen)}
}

// AppendSystemMessage appends the compact encoding of m to dst. It fails
// only for a type that is not one of this package's system messages (or a
// nil pointer).
func AppendSystemMessage(dst []byte, m SystemMessage) ([]byte, error) {
	switch m := m.(type) {
	case *WatchRequest:
		if m != nil {
			return appendPIDRef(appendPIDRef(append(dst, sysWatch), m.Watcher), m.Watchee), nil
		}
	case *UnwatchRequest:
		if m != nil {
			return appendPIDRef(appendPIDRef(append(dst, sysUnwatch), m.Watcher), m.Watchee), nil
		}
	case *TerminatedNotice:
		if m != nil {
			return append(appendPIDRef(append(dst, sysTerminated), m.Who), m.Why), nil
		}
	case *SpawnRequest:
		if m != nil {
			dst = appendString(appendString(append(dst, sysSpawnRequest), m.Name), m.Kind)
			return appendUvarint(dst, m.RequestID), nil
		}
	case *SpawnResponse:
		if m != nil {
			dst = appendPIDRef(appendUvarint(append(dst, sysSpawnResponse), m.RequestID), m.PID)
			return appendString(dst, m.Err), nil
		}
	case *Ping:
		if m != nil {
			return appendUvarint(append(dst, sysPing), m.Seq), nil
		}
	case *Pong:
		if m != nil {
			return appendUvarint(append(dst, sysPong), m.Seq), nil
		}
	case *StopRequest:
		if m != nil {
			return append(dst, sysStop), nil
		}
	case *PoisonPillRequest:
		if m != nil {
			return append(dst, sysPoisonPill), nil
		}
	case *DeadLetterResponse:
		if m != nil {
			dst = appendPIDRef(append(dst, sysDeadLetterResponse), m.Target)
			if m.Reason != DeadLetterNoTarget {
				dst = append(dst, byte(m.Reason))
			}
			return dst, nil
		}
	case *WatchesDropped:
		if m != nil {
			return appendString(append(dst, sysWatchesDropped), m.NodeID), nil
		}
	}
	return dst, fmt.Errorf("%w: system message %T", ErrUnknownType, m)
}

// DecodeSystemMessage decodes one system message produced by
// AppendSystemMessage. Bad bytes give ErrMalformed (or ErrUnknownType for an
// unknown tag); it never panics.
func DecodeSystemMessage(b []byte) (SystemMessage, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty system message", ErrMalformed)
	}
	c := cursor{b: b[1:]}
	var m SystemMessage
	switch b[0] {
	case sysWatch:
		w := c.pidRef()
		m = &WatchRequest{Watcher: w, Watchee: c.pidRef()}
	case sysUnwatch:
		w := c.pidRef()
		m = &UnwatchRequest{Watcher: w, Watchee: c.pidRef()}
	case sysTerminated:
		who := c.pidRef()
		m = &TerminatedNotice{Who: who, Why: c.byte1()}
	case sysSpawnRequest:
		name := c.str("name", maxSysStringLen)
		kind := c.str("kind", maxSysStringLen)
		m = &SpawnRequest{Name: name, Kind: kind, RequestID: c.uvarint()}
	case sysSpawnResponse:
		id := c.uvarint()
		pid := c.pidRef()
		m = &SpawnResponse{RequestID: id, PID: pid, Err: c.str("error", maxSysStringLen)}
	case sysPing:
		m = &Ping{Seq: c.uvarint()}
	case sysPong:
		m = &Pong{Seq: c.uvarint()}
	case sysStop:
		m = &StopRequest{}
	case sysPoisonPill:
		m = &PoisonPillRequest{}
	case sysDeadLetterResponse:
		dl := &DeadLetterResponse{Target: c.pidRef()}
		if c.err == nil && c.off < len(c.b) {
			if dl.Reason = DeadLetterReason(c.byte1()); dl.Reason == DeadLetterNoTarget {
				c.fail("dead letter reason 0 is written as no byte")
			}
		}
		m = dl
	case sysWatchesDropped:
		m = &WatchesDropped{NodeID: c.str("node id", maxNodeIDLen)}
	default:
		return nil, fmt.Errorf("%w: system message tag %d", ErrUnknownType, b[0])
	}
	if err := c.finish("system message"); err != nil {
		return nil, err
	}
	return m, nil
}
