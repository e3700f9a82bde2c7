package cluster

import (
	"errors"
	"maps"
	"strconv"
	"strings"

	"github.com/fraktor-go/fraktor/actor"
)

// ForwardHeader is the header key that counts how many times a message was
// forwarded because the grain it was sent to was gone (forward). A grain
// sees it in actor.Context.MessageHeader on a message that was forwarded.
const ForwardHeader = "fraktor-cluster-forwards"

// maxForwards bounds the forwards of one message: past it the message is a
// dead letter. A message normally needs one (the grain passivated, moved or
// stopped before it arrived); more mean activations that keep ending before
// they handle it (a grain that stops itself when it starts), which must not
// keep the message circling for ever.
const maxForwards = 3

// forward is the actor.Redirect of the placement actor's children: a Send
// that reaches this member for one of its grains that is gone (it
// passivated, moved away, or stopped with the message still in its
// mailbox) is routed again like Send, to the identity's next activation,
// instead of becoming a dead letter. The sender's PidCache entry, or a
// local caller that found the route just before it was withdrawn, still
// leads to the old activation until the ActivationTerminated broadcast
// reaches it (and for the PidCache TTL when the broadcast is lost).
//
// Only messages without a sender are forwarded, as Send makes them. A
// request's sender is told of the dead letter at once and its Request
// retries; forwarding it as well would answer twice. Nor is a PoisonPill
// (the placement actor's own passivation), or anything with a custom
// IdentityLookup, whose cache may keep returning the PID that is gone.
// While this member is leaving, the message is relayed to another member
// instead (relay).
//
// The message goes through a resolution (flight) that never takes a cached
// PID equal to the one it could not reach. The owner may still answer with
// that PID (requesters that waited for a grain that stopped in its Started
// handler); then the delivery fails again, and its forward marks the
// flight, which resolves afresh instead of delivering there once more
// (flightGroup.join).
//
// A forwarded message may arrive after messages its sender sent later:
// those that found the new activation directly, and those forwarded before
// it (the worker draining a stopped grain's mailbox forwards what was
// queued there, while a sender whose Send reaches the closed mailbox
// forwards it on its own goroutine).
func (c *Cluster) forward(gone *actor.PID, name string, msg any, sender *actor.PID) bool {
	if sender != nil || c.custom {
		return false
	}
	id, err := ParseIdentity(name)
	if err != nil {
		return false
	}
	if _, hosted := c.byKind[id.Kind]; !hosted {
		return false
	}
	inner, h := actor.UnwrapEnvelope(msg)
	if _, ok := inner.(*actor.PoisonPill); ok {
		return false
	}
	n := forwardsOf(h)
	if n >= maxForwards {
		return false
	}
	fh := make(actor.Header, len(h)+1)
	maps.Copy(fh, h)
	fh.Set(ForwardHeader, strconv.FormatUint(n+1, 10))
	fwd := &actor.MessageEnvelope{Header: fh, Message: inner}
	if c.leaving() != nil {
		return c.relay(id, fwd, gone)
	}
	c.metrics.forwarded(id.Kind)
	c.sendAfterResolve(id, fwd, gone)
	return true
}

// Headers of a Send relayed by a leaving member (relay).
const (
	relayHeader     = "fraktor-cluster-relay"      // the identity
	relayGoneHeader = "fraktor-cluster-relay-gone" // the PID it did not reach, Address "/" ID
)

// relay passes a Send for one of this member's grains that is gone on to
// another member while this one leaves: this member resolves nothing any
// more, and the others route the identity here until the view without it
// reaches them. The member that will own the identity then (its owner in
// the last view without this one) routes it as a Send (relayed), retrying
// the activation requests this member refuses as leaving until its view
// has changed. Before, such Sends were dead letters: those sent on a PID
// cached elsewhere, and those still queued when the grain stopped.
func (c *Cluster) relay(id Identity, msg *actor.MessageEnvelope, gone *actor.PID) bool {
	v := c.view.Load()
	if v == nil {
		return false
	}
	self := c.Self().Key()
	others := make([]Member, 0, len(v.topo.Members))
	for _, m := range v.topo.Members {
		if m.Key() != self {
			others = append(others, m)
		}
	}
	owner, err := c.buildRing(Topology{Epoch: v.topo.Epoch, Members: others}).Owner(id)
	if err != nil {
		return false // no other member hosts the kind
	}
	msg.Header.Set(relayHeader, id.String())
	if gone != nil {
		msg.Header.Set(relayGoneHeader, gone.Address+"/"+gone.ID)
	}
	c.metrics.forwarded(id.Kind)
	c.root.Send(actor.NewPID(owner.Address, placementName), msg)
	return true
}

// relayed routes a Send another member relayed to this one's placement
// actor (relay) as Send routes it, never to the PID the relay could not
// reach. A message to the placement actor without the relay header is
// not one: it is dropped, as before.
func (c *Cluster) relayed(ctx actor.Context) {
	h := ctx.MessageHeader()
	v := h.Get(relayHeader)
	if v == "" || ctx.Sender() != nil {
		return
	}
	id, err := ParseIdentity(v)
	if err != nil || id.Validate() != nil {
		return
	}
	var gone *actor.PID
	if addr, pid, ok := strings.Cut(h.Get(relayGoneHeader), "/"); ok {
		gone = actor.NewPID(addr, pid)
	}
	fh := make(actor.Header, len(h))
	for k, val := range h {
		if k != relayHeader && k != relayGoneHeader {
			fh[k] = val
		}
	}
	msg := &actor.MessageEnvelope{Header: fh, Message: ctx.Message()}
	if c.leaving() != nil {
		// This member leaves too: relayed on (counted as a forward).
		if !c.forward(gone, v, msg, nil) {
			c.sys.DeadLetter(ctx.Self(), msg, nil, ErrShuttingDown)
		}
		return
	}
	c.sendAfterResolve(id, msg, gone)
}

// forwardsOf is how many times a message with header h was forwarded. The
// header may come from another node: a value that is not a count is 0, and
// one too large to parse counts as past the bound (never negative, which
// would buy a message more forwards).
func forwardsOf(h actor.Header) uint64 {
	v := h.Get(ForwardHeader)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 32)
	switch {
	case err == nil:
		return n
	case errors.Is(err, strconv.ErrRange):
		return maxForwards
	}
	return 0
}
