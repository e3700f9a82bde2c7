// Package consul is the Consul membership provider of the fraktor cluster: it
// implements cluster.Provider with github.com/hashicorp/consul/api.
//
// Each process incarnation joins with a Consul session (TTL, no node checks,
// behavior "delete") that holds one KV key under
// <KeyPrefix>/<Cluster>/members/, whose value records the member's address,
// kinds and weight. The session is renewed against the servers every
// RenewInterval; the membership lease deadline is the send time of the last
// successful renewal plus FencePeriod, which is shorter than SessionTTL, so
// the servers cannot invalidate the session (and other members cannot see
// this one gone) before the deadline. A service registration with a TTL
// check serves discovery and operator UIs; it plays no part in the lease.
//
// Views are consistent blocking queries on the cluster prefix (WaitIndex,
// WaitTime);
// the returned index is the view epoch. If the index goes back (a server
// restored from an older snapshot, say) the regression is reported with a
// cluster.MembershipEventEpochRegressed event and the delivered epochs are
// re-based so that they keep growing. Errors back off exponentially with
// jitter; renewal failures drive the lease state. Leave writes a released
// marker under <KeyPrefix>/<Cluster>/released/ and deletes the member key in
// one transaction, then destroys the session and deregisters the service.
//
// Every goroutine belongs to one Membership and ends on Leave or Stop. ACL
// tokens are never logged: Config implements slog.LogValuer without them.
// See docs/membership.md for the timing parameters and their safe relations.
package consul
