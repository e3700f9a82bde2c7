package remote

import "time"

// sendClass says who made this node send to an address, which decides
// whether the dial it may cause takes from the dial budget (allowDial).
type sendClass uint8

const (
	// sendLocal: local code chose the address (Node.Send, a PID the
	// runtime resolved). The endpoint's first dial is free.
	sendLocal sendClass = iota
	// sendReply: to an address a peer named (the sender of a message
	// from the wire, a remote watcher), which may be any address: a new
	// endpoint's first dial takes from the budget.
	sendReply
	// sendAnswer: the runtime's own answer to an address a peer named (a
	// DeadLetterResponse, a Terminated for a missing process). It goes
	// out only over an endpoint that exists; to any other address it is
	// dropped (Stats.AnswersDropped), not dialled. Why: it only makes a
	// request fail before its deadline, and the requester's node is
	// connected to this one in the common case (it sent the request);
	// an address without an endpoint is a forwarded sender, or one a
	// peer made up to have this node dial it
	// (TestDeadLetterAnswerToUnknownAddressNotDialled).
	sendAnswer
)

// allowDial takes one dial from the node-wide budget at now (the Node's
// clock), or reports false (counted in Stats.DialsDeferred) when it is
// empty. Why: anything that makes this node send to an address has it
// dialled, and redialled with backoff until GiveUpAfter; a peer can name
// any address as the sender of what it sends (a reply, a dead-letter
// answer, a watcher's Terminated go there), so without a bound a peer
// could make this node dial as many addresses as it names, each ~75 times
// with the default backoffs. Every dial takes from the budget
// (endpoint.run) but those of an endpoint that local code sent to, until
// one of them fails before any has reached the address, and again once
// one has: local traffic to a new address never waits behind what others
// caused, nor does the reconnection of a peer this node uses
// (TestLocalPeerRedialsWithBudgetSpent), while the dials others can cause
// are bounded per second node-wide (TestDialBudgetBoundsReflectedDials).
// A refused dial is not queued: its endpoint waits for its next backoff
// slot (linkPolicy.budgetRefused), with its queue and give-up clock as for
// a failed dial. How many endpoints wait so is bounded too (endpointFor).
//
// Why a redial after a dial of its own reached the address is free: the
// node there answered to it as itself, so it is a node local code talks
// to, and its redials are bounded per address by the backoff; taking them
// from the budget let whoever kept it empty (answers to made-up senders)
// defer them until GiveUpAfter.
func (n *Node) allowDial(now time.Time) bool {
	if n.dials.AllowN(now, 1) {
		return true
	}
	n.stats.dialsDeferred.Add(1)
	return false
}
