// Package cluster is the virtual-actor (grain) cluster: an extension that
// gives every member of an actor system a place in one space of grains,
// each addressed by an Identity (kind and ID) and activated on demand on
// the member that owns it.
//
// Users install it with Install (after remote.Install), obtain the runtime
// with Get, describe grain kinds with NewKind, and call grains with
// Request, Cluster.RequestFuture and Cluster.Send, which resolve the owner
// through the PidCache, ask its placement actor to activate the grain when
// needed, and retry as Config.Retry says within the caller's deadline.
// Inside a grain, IdentityOf, FencingTokenOf and Passivate work on its
// actor.Context. The runtime publishes its events on the system's
// EventStream and its metrics through the system's MeterProvider.
//
// One activation per identity: an owner activates a grain only while its
// membership lease is valid past the stop budget, under the caller's view,
// after every earlier owner handed the identity over (or left, or was gone
// for the wait-out), and with no local lease held; a member whose lease runs
// short fences itself and rejoins as a new incarnation. Every activation
// carries a FencingToken that storage can check.
//
// Typed grains: protoc-gen-fraktor-grain generates, from a .proto
// service, a grain interface whose methods take a GrainContext, a kind
// (NewGrainKind underneath) and a client (Call and CallFuture underneath);
// a method's error reaches the caller as a *GrainError (docs/typed-grains.md).
//
// Underneath are the deterministic pieces: members and views (Member,
// Topology), the membership Provider contract with the in-memory
// MemoryRegistry (the Consul provider is in cluster/consul), rendezvous
// owner selection (HashConfig, Ring), the PidCache, the ActivationLedger
// with its leases, and the PartitionIdentityLookup. docs/cluster.md
// describes the runtime, docs/identity.md and docs/membership.md the rest.
package cluster
