package actor

import (
	"hash/maphash"
	"sync"
)

const registryShards = 64

// registry maps process IDs to local processes. It is sharded so that
// spawns and stops on different workers rarely meet on one lock.
type registry struct {
	seed   maphash.Seed
	shards [registryShards]registryShard
}

type registryShard struct {
	mu sync.RWMutex
	m  map[string]Process
	_  [32]byte
}

func newRegistry() *registry {
	r := &registry{seed: maphash.MakeSeed()}
	for i := range r.shards {
		r.shards[i].m = make(map[string]Process)
	}
	return r
}

func (r *registry) shard(id string) *registryShard {
	return &r.shards[maphash.String(r.seed, id)%registryShards]
}

// add registers p under id unless the id is taken.
func (r *registry) add(id string, p Process) bool {
	s := r.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.m[id]; ok {
		return false
	}
	s.m[id] = p
	return true
}

func (r *registry) get(id string) (Process, bool) {
	s := r.shard(id)
	s.mu.RLock()
	p, ok := s.m[id]
	s.mu.RUnlock()
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

func (r *registry) len() int {
	n := 0
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
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.RLock()
		for _, p := range s.m {
			f(p)
		}
		s.mu.RUnlock()
	}
}
