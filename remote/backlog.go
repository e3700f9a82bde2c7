package remote

import "github.com/fraktor-go/fraktor/actor"

// backlogRefused counts k user messages from the peer from that were
// refused because the mailbox of target (a local actor) held
// Config.MaxMailboxBacklog user messages or more, and logs it at most once
// a second. The messages are dead letters already (actor.ErrBacklogFull),
// whose senders were answered. Called on the connection's reader, once per
// frame for the refusals of its runs (Node.deliverBatch), once per message
// for the others (post, deliverControl).
//
// Why refuse rather than stop reading the connection: a reader that waits
// for one actor's mailbox to drain holds every other message of that
// connection, replies included, behind it; a cluster's grain that waits
// for a reply from the peer whose messages fill its own mailbox would wait
// out its request's deadline. Refused messages fail their requests at once
// (wire reason 6) and leave the rest of the link alone.
func (r *Remote) backlogRefused(from Peer, target *actor.PID, k int) {
	r.node.stats.backlogRefused.Add(uint64(k))
	if ok, held := r.backlogLog.allow(r.sys.Clock().Now()); ok {
		r.log.Warn("remote: messages from a peer refused: their actor's mailbox held Config.MaxMailboxBacklog messages or more",
			"peer", from.String(), "actor", target.String(), "refused", k, "refused_total", r.node.stats.backlogRefused.Load(), "max", r.node.maxBacklog, "suppressed", held)
	}
}
