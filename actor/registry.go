package actor

import (
	"hash/maphash"
	"sync"
	"sync/atomic"
)

const registryShards = 64

// registry maps process IDs to local processes: actors with a generated ID
// in seq (registry_seq.go), every other ID (names, futures, custom
// processes) in a map sharded so that spawns and stops on different workers
// rarely meet on one lock.
type registry struct {
	seed   maphash.Seed
	shards [registryShards]registryShard
	seq    seqTable

	// Set once a named ID of the generated form is in the map (a name
	// "x$5", a future's "future$5"); from then on a generated ID is also
	// checked against the map, so that one ID never names two processes.
	// One flag for nested IDs ("#..."), one for the rest: the futures that
	// remote registers set only the second.
	namedSeqTop, namedSeqNested atomic.Bool

	// How many processes each has visited, in all: a walk of every actor
	// is what a peer's termination must not cost
	// (TestFailRequestsToWalksNoActors).
	visits atomic.Uint64

	// The registered futures of requests to other nodes, by address
	// (request_index.go).
	requests requestIndex
}

type registryShard struct {
	mu sync.RWMutex
	m  map[string]Process
	_  [32]byte
}

// newRegistry returns an empty registry for generated IDs numbered from
// base+1.
func newRegistry(base uint64) *registry {
	r := &registry{seed: maphash.MakeSeed()}
	for i := range r.shards {
		r.shards[i].m = make(map[string]Process)
	}
	r.seq.init(base)
	return r
}

func (r *registry) namedSeqFlag(id string) *atomic.Bool {
	if len(id) > 0 && id[0] == '#' {
		return &r.namedSeqNested
	}
	return &r.namedSeqTop
}

// addSeq registers c under its generated ID id, whose sequence number seq
// nobody else holds. It fails only when a named process took the same ID;
// seq is then finished with.
func (r *registry) addSeq(id string, seq uint64, c *cell) bool {
	r.seq.store(seq, c)
	// Sequentially consistent with add: either add sees c in the slot, or
	// this sees the flag and takes the shard lock add holds while it
	// inserts.
	if !r.namedSeqFlag(id).Load() {
		return true
	}
	s := r.shard(id)
	s.mu.RLock()
	_, taken := s.m[id]
	s.mu.RUnlock()
	if taken {
		r.seq.finish(seq)
		return false
	}
	return true
}

// finishSeq lets go of a number that was handed out and never added.
func (r *registry) finishSeq(seq uint64) { r.seq.finish(seq) }

// removeCell removes c, registered by add or addSeq.
func (r *registry) removeCell(c *cell) {
	id := c.pid.ID
	if seq, ok := seqOf(id); ok && r.seq.remove(seq, c) {
		return
	}
	r.remove(id)
}

// lookupSeq returns the actor whose generated ID is id, or nil.
func (r *registry) lookupSeq(id string) *cell {
	seq, ok := seqOf(id)
	if !ok {
		return nil
	}
	if c := r.seq.load(seq); c != nil && c.pid.ID == id {
		return c
	}
	return nil
}

func (r *registry) shard(id string) *registryShard {
	return &r.shards[maphash.String(r.seed, id)%registryShards]
}

// add registers p under id, a name (not generated), unless the id is taken.
func (r *registry) add(id string, p Process) bool {
	_, shaped := seqOf(id)
	if shaped {
		r.namedSeqFlag(id).Store(true)
	}
	s := r.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		return false
	}
	if shaped && r.lookupSeq(id) != nil {
		return false
	}
	s.m[id] = p
	return true
}

// reserving holds a name in the map from reserve to fill: taken for add
// and reserve, absent for get and each.
var reserving Process = &reservation{}

// reservation is the type of reserving; it is never handed out.
type reservation struct{}

func (*reservation) SendUser(*PID, any, *PID)       {}
func (*reservation) SendSystem(*PID, SystemMessage) {}
func (*reservation) StopProcess(*PID)               {}

// reserve holds id, a name (not generated), for an actor about to be made,
// unless the id is taken; fill then registers the actor under it. Between
// the two, the name is taken (add, reserve) and has no process (get: a
// message to it is a dead letter, as before a spawn registers its actor).
func (r *registry) reserve(id string) bool { return r.add(id, reserving) }

// fill registers c under id, which reserve holds for it. Nothing removes a
// reservation: remove and removeIf are called only by the process
// registered under an ID.
func (r *registry) fill(id string, c *cell) {
	s := r.shard(id)
	s.mu.Lock()
	s.m[id] = c
	s.mu.Unlock()
}

func (r *registry) get(id string) (Process, bool) {
	if c := r.lookupSeq(id); c != nil {
		return c, true
	}
	s := r.shard(id)
	s.mu.RLock()
	p, ok := s.m[id]
	s.mu.RUnlock()
	if p == reserving {
		return nil, false
	}
	return p, ok
}

func (r *registry) remove(id string) {
	s := r.shard(id)
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

// removeIf removes id only while it still maps to p.
func (r *registry) removeIf(id string, p Process) bool {
	s := r.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if q, ok := s.m[id]; !ok || q != p {
		return false
	}
	delete(s.m, id)
	return true
}

// len counts the registered processes, and the names reserved for actors
// being spawned.
func (r *registry) len() int {
	n := 0
	r.seq.each(func(*cell) { n++ })
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// each calls f for every registered process (for metrics collection).
func (r *registry) each(f func(Process)) {
	n := uint64(0)
	r.seq.each(func(c *cell) { n++; f(c) })
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.RLock()
		for _, p := range s.m {
			if p == reserving {
				continue
			}
			n++
			f(p)
		}
		s.mu.RUnlock()
	}
	r.visits.Add(n)
}

// addRequest indexes f, registered by ID and not yet completable by anyone
// else, under address, its request's target's.
func (r *registry) addRequest(address string, f *Future) { r.requests.add(r.seed, address, f) }

// removeRequest drops f, which addRequest indexed under address.
func (r *registry) removeRequest(address string, f *Future) { r.requests.remove(r.seed, address, f) }

// takeRequests removes and returns the futures indexed under address.
func (r *registry) takeRequests(address string) map[*Future]struct{} {
	return r.requests.take(r.seed, address)
}
