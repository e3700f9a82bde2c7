package remote

import (
	"fmt"

	"github.com/fraktor-go/fraktor/actor"
)

// remoteProcess is the process of every PID on another node (two instances
// per Remote: the target address is in the PID). It turns what the runtime
// sends into envelopes for Node.Send. It never blocks; a failure to send is
// reported once through the Undelivered hook, which makes it a dead letter.
//
// cls is the send class of its PIDs: Remote.proc (sendLocal) serves the
// PIDs the system resolved (made by local code), Remote.replyProc
// (sendReply) the PIDs the extension made from a peer's words (the
// sender of an inbound message, a remote watcher: replyPID), so that the
// dials such an address causes take from the dial budget. A
// DeadLetterResponse, and a Terminated for a process that was not found,
// are sendAnswer whatever the PID.
type remoteProcess struct {
	r   *Remote
	cls sendClass
}

var _ actor.Process = (*remoteProcess)(nil)

// SendUser implements actor.Process: msg travels with its sender (as a
// PIDRef, so the receiver can answer). *actor.PoisonPill travels as
// *PoisonPillRequest and *actor.DeadLetterResponse as *DeadLetterResponse; any
// other message must be registered in the Serializers. An
// *actor.MessageEnvelope travels as its message with its header.
func (p *remoteProcess) SendUser(pid *actor.PID, msg any, sender *actor.PID) {
	switch m := msg.(type) {
	case *actor.PoisonPill:
		msg = &PoisonPillRequest{}
	case *actor.DeadLetterResponse:
		p.r.send(pid, &DeadLetterResponse{Target: p.r.ref(m.Target), Reason: deadLetterReason(m.Reason)}, sender, sendAnswer)
		return
	case *actor.MessageEnvelope:
		switch inner := m.Message.(type) {
		case *actor.PoisonPill:
			msg = &actor.MessageEnvelope{Header: m.Header, Message: &PoisonPillRequest{}}
		case *actor.DeadLetterResponse:
			p.r.send(pid, &DeadLetterResponse{Target: p.r.ref(inner.Target), Reason: deadLetterReason(inner.Reason)}, sender, sendAnswer)
			return
		}
	}
	p.r.send(pid, msg, sender, p.cls)
}

// SendSystem implements actor.Process. Watch and Unwatch are recorded (so
// that the watcher hears of the node's end) and sent; Terminated (a local
// actor that a remote watcher watched has stopped) and Stop are sent.
// Supervision messages never cross nodes: a parent is always local.
func (p *remoteProcess) SendSystem(pid *actor.PID, m actor.SystemMessage) {
	r := p.r
	switch m := m.(type) {
	case *actor.Watch:
		if m.Watcher == nil {
			return
		}
		r.watches.addOutbound(r, pid, m.Watcher)
		r.send(pid, &WatchRequest{Watcher: r.ref(m.Watcher), Watchee: r.ref(pid)}, nil, p.cls)
	case *actor.Unwatch:
		if m.Watcher == nil {
			return
		}
		r.watches.removeOutbound(r, pid, m.Watcher)
		if !r.node.running.Load() {
			// The Node has stopped (Shutdown stops actors after the
			// extensions; a watcher unwatches as it stops): its goodbye
			// made each connected peer drop the watches of this node's
			// actors, and a peer it did not reach drops them when it finds
			// the node gone. Not a dead letter
			// (TestGracefulShutdownOfARemoteWatcherLeavesNoDeadLetter).
			return
		}
		r.send(pid, &UnwatchRequest{Watcher: r.ref(m.Watcher), Watchee: r.ref(pid)}, nil, p.cls)
	case *actor.TerminatedSystem:
		if !r.watches.endInbound(watchKey{watcher: r.ref(pid), watchee: r.ref(m.Who)}) {
			// No watch of the peer's watcher is wanted here (never, or
			// unwatched, or told already: a watch update drained at the
			// process's stop tells, and then its watcher list would
			// again). Remote watchers come only from the watch table.
			return
		}
		if !r.node.running.Load() {
			// The Node has stopped (Shutdown stops actors after the
			// extensions): its goodbye told each connected peer, whose
			// watchers of this node's actors get AddressTerminated, and a
			// peer it did not reach finds the node gone. This notice could
			// not go out and tells nobody anything: it is not a dead letter
			// (TestGracefulShutdownWithRemoteWatchersLeavesNoDeadLetter).
			return
		}
		cls := p.cls
		if m.Why == actor.TerminatedNotFound {
			cls = sendAnswer // the answer to a Watch of a missing process
		}
		r.send(pid, &TerminatedNotice{Who: r.ref(m.Who), Why: wireReason(m.Why)}, nil, cls)
	case *actor.Stop:
		r.send(pid, &StopRequest{}, nil, p.cls)
	default:
		r.log.Debug("remote: system message not sent to a remote process", "type", fmt.Sprintf("%T", m), "pid", pid.String())
	}
}

// StopProcess implements actor.Process: the remote process is stopped.
func (p *remoteProcess) StopProcess(pid *actor.PID) { p.r.send(pid, &StopRequest{}, nil, p.cls) }

// send hands one envelope of class cls to the Node. Errors are reported
// through the Undelivered hook (exactly once), so the result is not needed
// here.
func (r *Remote) send(target *actor.PID, msg any, sender *actor.PID, cls sendClass) {
	_ = r.node.send(target.Address, target, sender, msg, cls)
}

// sendEnv sends an envelope built from wire references, of class cls.
func (r *Remote) sendEnv(env Envelope, cls sendClass) {
	msg := env.Message
	if env.Header != nil {
		msg = &actor.MessageEnvelope{Header: env.Header, Message: msg}
	}
	_ = r.node.send(env.Target.Address, refPID(env.Target), refPID(env.Sender), msg, cls)
}

// ref is the wire form of a PID. A PID made before the remote extension was
// installed (the guardians) carries actor.LocalAddress; on the wire it
// carries this node's address, so that peers can answer it.
func (r *Remote) ref(p *actor.PID) PIDRef {
	if p == nil {
		return PIDRef{}
	}
	if p.Address == actor.LocalAddress {
		return PIDRef{Address: r.Address(), ID: p.ID}
	}
	return PIDRef{Address: p.Address, ID: p.ID}
}

// replyPID is the PID of a reference a peer named (the sender of an
// inbound message, a watcher), nil for the zero one: bound to replyProc
// when it names another node, so that what is sent to it is sendReply.
func (r *Remote) replyPID(p PIDRef) *actor.PID {
	if p.IsZero() {
		return nil
	}
	if r.isLocal(p.Address) {
		return actor.NewPID(p.Address, p.ID)
	}
	return actor.NewBoundPID(p.Address, p.ID, r.replyProc)
}

// normalize is ref for a reference that came from the wire.
func (r *Remote) normalize(p PIDRef) PIDRef {
	if p.Address == actor.LocalAddress {
		p.Address = r.Address()
	}
	return p
}

// pid is the PID of a wire reference (nil for the zero reference). It
// resolves lazily: to a local process, or to the remote process.
func (r *Remote) pid(p PIDRef) *actor.PID {
	if p.IsZero() {
		return nil
	}
	return actor.NewPID(p.Address, p.ID)
}

// wireReason maps an actor.TerminatedReason to Terminated.Why.
func wireReason(why actor.TerminatedReason) uint8 {
	switch why {
	case actor.TerminatedNotFound:
		return TerminatedNotFound
	case actor.TerminatedAddressTerminated:
		return TerminatedAddressTerminated
	default:
		return TerminatedStopped
	}
}

// actorReason maps Terminated.Why to an actor.TerminatedReason; unknown
// values (a newer peer) count as stopped.
func actorReason(why uint8) actor.TerminatedReason {
	switch why {
	case TerminatedNotFound:
		return actor.TerminatedNotFound
	case TerminatedAddressTerminated, TerminatedAddressUnreachable:
		return actor.TerminatedAddressTerminated
	case TerminatedWatchRefused:
		// The watchee's node will not tell of its end: as for a node that
		// can no longer tell, the watch is over and the process may live on.
		return actor.TerminatedAddressTerminated
	default:
		return actor.TerminatedStopped
	}
}
