// Package router spreads messages over a set of actors, the routees: pool
// routers spawn and supervise their routees, group routers route over PIDs
// the caller owns. The strategies are round-robin, random, broadcast,
// consistent-hash (rendezvous hashing with xxhash over a key the message
// provides) and scatter-gather-first-completed.
//
// A router's PID resolves to a Process that routes inside the send, on the
// sender's goroutine: one atomic load of the routee snapshot, the
// strategy's choice (an atomic counter for round-robin), and a post
// straight into the routee's mailbox. Routing costs no extra hop, takes no
// lock and allocates nothing (scatter-gather excepted: it registers a
// collector per request). Every change of the routees (AddRoutee,
// RemoveRoutee, Resize, a routee's Terminated) is made by the router's own
// actor, which publishes a new snapshot (copy-on-write); management
// messages sent to the router's PID go to that actor, in order.
//
// The router's actor is a child of the Spawner (an actor's Context or the
// RootContext) and is named "<name>$manager"; the router's PID has the name
// itself. A pool's routees are that actor's children, supervised by the
// WithSupervisor strategy: a restarted routee stays in the pool, one that
// stops leaves it. Stop, Poison and Watch on the router's PID act on the
// router; stopping it stops a pool's routees, never a group's.
//
// Messages a routee receives through a router keep their sender, so the
// routee answers the original requester directly.
package router
