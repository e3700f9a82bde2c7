// Package consul is the Consul membership provider of the fraktor cluster: it
// implements cluster.Provider with github.com/hashicorp/consul/api.
//
// Each process incarnation joins with a Consul session (TTL, no node checks,
// behavior "delete") that holds one KV key under
// <KeyPrefix>/<Cluster>/members/, whose value records the member's address,
// kinds and weight. Join raises the ID's incarnation record (the highest
// incarnation ever registered) in the same transaction, so an incarnation is
// never registered twice. The session is renewed against the servers every
// RenewInterval; the membership lease deadline is the send time of the last
// successful renewal plus FencePeriod, which is shorter than SessionTTL, so
// the servers cannot invalidate the session (and other members cannot see
// this one gone) before the deadline. A renewal answered a whole SessionTTL
// or more after the last acknowledged one restores nothing until the session
// is confirmed. A service registration with a TTL check serves discovery and
// operator UIs; it plays no part in the lease.
//
// Views are consistent blocking queries on the cluster prefix, one per
// Provider, shared by all its memberships; each lasts at most FencePeriod. A
// member key that no session holds is not a member. The epoch of a view is
// its index plus an epoch base stored under the prefix, so every member gives
// a view the same epoch; if the index goes back (a server restored from an
// older snapshot, or the servers reaping the tombstones of keys deleted
// under the prefix 15 minutes earlier) the regression is reported with a
// cluster.MembershipEventEpochRegressed event and the base is raised so that
// epochs keep growing. Errors back off exponentially with jitter; renewal
// failures drive the lease state. Leave writes a released marker under
// <KeyPrefix>/<Cluster>/released/ and deletes the member key in one
// transaction, then destroys the session and deregisters the service.
// Retire (cluster.Retirer) does the same for an incarnation that fenced and
// was stopped, step by step, so that a call the agent did not answer can
// be made again; the runtime retries it until the agent answers.
//
// A Provider shares one client (at most a few agent connections) among its
// memberships; create one per process. Its view goroutine runs while any
// membership is active, each membership's renewal and service-check
// goroutines until its Leave or Stop. ACL tokens are never logged: Config implements slog.LogValuer
// without them. See docs/membership.md for the timing parameters and their
// safe relations.
package consul
