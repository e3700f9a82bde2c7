package cluster

import (
	"sync"

	"github.com/fraktor-go/fraktor/actor"
)

const localShardCount = 32 // power of two

// localActivations is this member's table of its own activations, one per
// held lease, from the grant to the grain's termination. It is the
// placement core's lease table (rule 4: an identity with an entry is not
// granted again) and the route to local grains: callers on this member find
// a local grain's PID here, so a grain hosted here costs no PidCache entry
// (the PidCache holds the PIDs of other members' grains).
//
// One goroutine at a time writes it: the placement actor, through its core.
// Writes of an entry and of its activation's PID take the shard's write
// lock; the writer reads without a lock (no one else writes), every other
// goroutine reads under the read lock.
type localActivations struct {
	shards [localShardCount]localShard
	n      int // entries; the writer's
}

type localShard struct {
	mu sync.RWMutex
	m  map[Identity]*activation
	_  [32]byte // keep shards on separate cache lines
}

func newLocalActivations() *localActivations {
	t := &localActivations{}
	for i := range t.shards {
		t.shards[i].m = make(map[Identity]*activation)
	}
	return t
}

func (t *localActivations) shard(id Identity) *localShard {
	return &t.shards[identityHash(0, id)&(localShardCount-1)]
}

// get returns the activation of id, or nil. The writer's.
func (t *localActivations) get(id Identity) *activation { return t.shard(id).m[id] }

// put adds a, which has no entry yet. The writer's.
func (t *localActivations) put(a *activation) {
	s := t.shard(a.id)
	s.mu.Lock()
	s.m[a.id] = a
	s.mu.Unlock()
	t.n++
}

// remove drops a's entry if it is still a's. The writer's.
func (t *localActivations) remove(a *activation) {
	s := t.shard(a.id)
	if s.m[a.id] != a {
		return
	}
	s.mu.Lock()
	delete(s.m, a.id)
	s.mu.Unlock()
	t.n--
}

// len returns the number of entries. The writer's.
func (t *localActivations) len() int { return t.n }

// each calls fn for every activation, in no particular order; fn must not
// add or remove entries. The writer's.
func (t *localActivations) each(fn func(*activation)) {
	for i := range t.shards {
		for _, a := range t.shards[i].m {
			fn(a)
		}
	}
}

// route returns the PID of id's local activation while it is routable (a
// resolution published it and nothing withdrew it since). Any goroutine;
// it does not allocate.
func (t *localActivations) route(id Identity) *actor.PID {
	s := t.shard(id)
	s.mu.RLock()
	var pid *actor.PID
	if a := s.m[id]; a != nil && a.marks.Load()&markRoutable != 0 {
		pid = a.pid
	}
	s.mu.RUnlock()
	return pid
}

// publish makes id's local activation with PID pid routable and reports
// whether there is one. Any goroutine. An activation that has begun to
// stop is left unroutable: a resolution publishes the PID it was answered
// with, and the activation may have begun to stop (its route withdrawn)
// after the answer; routable again, it would take what callers send behind
// its PoisonPill, as dead letters. The placement marks markStopping before
// it withdraws the route, and the mark is checked and the route set in one
// compare-and-swap, so a publish either precedes the withdrawal or sees the
// mark.
func (t *localActivations) publish(id Identity, pid *actor.PID) bool {
	s := t.shard(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.m[id]
	if a == nil || a.pid == nil || a.pid.ID != pid.ID || a.pid.Address != pid.Address {
		return false
	}
	for {
		m := a.marks.Load()
		if m&markStopping != 0 || a.marks.CompareAndSwap(m, m|markRoutable) {
			return true
		}
	}
}

// withdraw makes id's local activation unroutable, when its PID's ID is
// pidID (any PID when pidID is empty), and reports whether it was
// routable. Any goroutine.
func (t *localActivations) withdraw(id Identity, pidID string) bool {
	s := t.shard(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	a := s.m[id]
	if a == nil || (pidID != "" && (a.pid == nil || a.pid.ID != pidID)) {
		return false
	}
	return a.marks.And(^markRoutable)&markRoutable != 0
}

// setPID records the PID of a, which has an entry. The writer's.
func (t *localActivations) setPID(a *activation, pid *actor.PID) {
	s := t.shard(a.id)
	s.mu.Lock()
	a.pid = pid
	s.mu.Unlock()
}
