// Package cluster is the virtual-actor (grain) cluster: membership views,
// rendezvous-hash owner selection, the identity lookup with its PidCache and
// activation ledger, placement and the cluster context that routes requests
// to grains with retries.
//
// A grain is addressed by an Identity (kind and ID). Exactly one member owns
// an identity in a given view; the owner activates it on demand under a lease
// and passivates it when idle.
package cluster
