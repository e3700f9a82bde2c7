package remote

import "testing"

// Exports for the actor-level tests in package remote_test.

// TestCA is a certificate authority made for one test.
type TestCA = testCA

// NewTestCA returns a fresh self-signed CA.
func NewTestCA(t *testing.T) *TestCA { return newTestCA(t) }

// MTLSConfig is NodeTestConfig with mutual TLS under ca: a certificate for
// 127.0.0.1 named name, used as server and client certificate.
func (ca *testCA) MTLSConfig(t *testing.T, name string) Config { return mtlsConfig(t, ca, name) }

// NodeTestConfig is DefaultConfig with the short backoffs of the tests.
func NodeTestConfig() Config { return testConfig() }

// SpawnerID is the ID of the process that takes spawn requests and answers.
const SpawnerID = spawnerID

// AwaitSpawnForTest registers a spawn request to address as SpawnNamed
// does, without sending it or reading its answer: the test plays a caller
// that has not woken up yet.
func (r *Remote) AwaitSpawnForTest(address string) uint64 {
	id, _, err := r.spawns.add(address)
	if err != nil {
		panic(err)
	}
	return id
}

// FailSpawnsToForTest fails the spawns waiting on address, as the end of
// its endpoint does.
func (r *Remote) FailSpawnsToForTest(address string, err error) int {
	return r.spawns.failAddress(address, err)
}

// SetPeersCapForTest sets the bound on the remembered peer IDs and on the
// records of retired endpoints (maxKnownPeers).
func (n *Node) SetPeersCapForTest(k int) {
	n.mu.Lock()
	n.peersCap = k
	n.mu.Unlock()
}

// SpawnedBy returns the live actors that the peer at address spawned here
// (Config.MaxSpawnsPerPeer's count).
func (r *Remote) SpawnedBy(address string) int { return r.spawned.count(address) }
