package actor

import (
	"hash/maphash"
	"sync"
)

// requestIndexShards is the number of locks the request index spreads its
// addresses over: requesters to different peers rarely meet on one lock.
const requestIndexShards = 16

// requestIndex holds the registered futures whose request went to another
// node, by the address of its target, from the future's start to its
// completion. failRequestsTo takes an address's set from it when the node at
// that address is gone: before, it walked the whole registry for them, so a
// peer that came and went over and over made this node visit every actor
// and grain at each goodbye, on the goroutine that reports it. Now the cost
// is the number of requests pending to that address (none: one map lookup).
// Only a request to another node pays for it (a map insert and delete under
// its address's shard lock); a local request is never indexed. An
// address's set is kept when it empties, so that a peer answered one request
// at a time does not make a map per request; it goes when its node is
// failed. TestFailRequestsToWalksNoActors pins it.
type requestIndex struct {
	shards [requestIndexShards]requestShard
}

type requestShard struct {
	mu sync.Mutex
	m  map[string]map[*Future]struct{} // target address → its pending futures
	_  [48]byte
}

func (x *requestIndex) shard(seed maphash.Seed, address string) *requestShard {
	return &x.shards[maphash.String(seed, address)%requestIndexShards]
}

// add indexes f, a future not yet reachable by anyone else, under address.
func (x *requestIndex) add(seed maphash.Seed, address string, f *Future) {
	s := x.shard(seed, address)
	s.mu.Lock()
	set := s.m[address]
	if set == nil {
		if s.m == nil {
			s.m = make(map[string]map[*Future]struct{})
		}
		set = make(map[*Future]struct{})
		s.m[address] = set
	}
	set[f] = struct{}{}
	s.mu.Unlock()
}

// remove drops f from address's set; a set already taken (take) does not
// have it any more, and f is not in a set made since.
func (x *requestIndex) remove(seed maphash.Seed, address string, f *Future) {
	s := x.shard(seed, address)
	s.mu.Lock()
	if set := s.m[address]; set != nil {
		delete(set, f)
	}
	s.mu.Unlock()
}

// take removes address's set and returns it (nil when it has none). The
// caller owns the set: futures that complete meanwhile no longer find it.
func (x *requestIndex) take(seed maphash.Seed, address string) map[*Future]struct{} {
	s := x.shard(seed, address)
	s.mu.Lock()
	set := s.m[address]
	delete(s.m, address)
	s.mu.Unlock()
	return set
}
