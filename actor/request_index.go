package actor

import (
	"hash/maphash"
	"sync"
)

// requestIndexShards is the number of locks the request index spreads its
// addresses over: requesters to different peers rarely meet on one lock.
const requestIndexShards = 16

// A set whose futures fall to a shrinkRatio-th of the most it has held, when
// that was at least shrinkFloor, is copied into a map of its present size:
// a Go map never gives back the room it grew to, so a burst of requests to
// a peer that stays (N pending at once, then few) would otherwise keep the
// room of N for as long as the peer lives. The copy moves at most
// peak/shrinkRatio futures after at least peak*(1-1/shrinkRatio) removals,
// so its cost per removal is bounded; a set that never held shrinkFloor
// futures (a peer answered a few requests at a time) is never copied, and
// its add and remove allocate nothing (TestRequestSetShrinksAfterBurst,
// TestRequestSetSteadyAllocatesNothing).
const (
	shrinkFloor = 64
	shrinkRatio = 8
)

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
// failed, and it is copied smaller after a burst (shrinkFloor).
// TestFailRequestsToWalksNoActors pins it.
type requestIndex struct {
	shards [requestIndexShards]requestShard

	// onIndexed, when set (by tests only, before any request), is called
	// with each future right after add made it reachable by address: the
	// earliest moment failRequestsTo can complete it, where a test puts a
	// failure (TestIndexedOnlyAfterRegistered).
	onIndexed func(f *Future)
}

type requestShard struct {
	mu sync.Mutex
	m  map[string]requestSet // target address → its pending futures
	_  [48]byte
}

// requestSet is one address's pending futures.
type requestSet struct {
	m    map[*Future]struct{}
	peak int // the most futures m has held since it was made
}

func (x *requestIndex) shard(seed maphash.Seed, address string) *requestShard {
	return &x.shards[maphash.String(seed, address)%requestIndexShards]
}

// add indexes f, a future not yet reachable by anyone else, under address.
func (x *requestIndex) add(seed maphash.Seed, address string, f *Future) {
	s := x.shard(seed, address)
	s.mu.Lock()
	set := s.m[address]
	if set.m == nil {
		if s.m == nil {
			s.m = make(map[string]requestSet)
		}
		set.m = make(map[*Future]struct{})
	}
	set.m[f] = struct{}{}
	if len(set.m) > set.peak {
		// Kept by value, so that a set costs no allocation beside its
		// map's; written back only when its peak rises, which a peer
		// answered a few requests at a time does not make it do.
		set.peak = len(set.m)
		s.m[address] = set
	}
	s.mu.Unlock()
	if x.onIndexed != nil {
		x.onIndexed(f)
	}
}

// remove drops f from address's set; a set already taken (take) does not
// have it any more, and f is not in a set made since.
func (x *requestIndex) remove(seed maphash.Seed, address string, f *Future) {
	s := x.shard(seed, address)
	s.mu.Lock()
	if set := s.m[address]; set.m != nil {
		delete(set.m, f)
		if set.peak >= shrinkFloor && len(set.m) <= set.peak/shrinkRatio {
			s.m[address] = set.shrunk()
		}
	}
	s.mu.Unlock()
}

// shrunk returns the set copied into a map of its present size
// (shrinkFloor).
func (set requestSet) shrunk() requestSet {
	m := make(map[*Future]struct{}, len(set.m))
	for f := range set.m {
		m[f] = struct{}{}
	}
	return requestSet{m: m, peak: len(m)}
}

// take removes address's set and returns its futures (nil when it has
// none). The caller owns them: futures that complete meanwhile no longer
// find them.
func (x *requestIndex) take(seed maphash.Seed, address string) map[*Future]struct{} {
	s := x.shard(seed, address)
	s.mu.Lock()
	set := s.m[address]
	delete(s.m, address)
	s.mu.Unlock()
	return set.m
}
