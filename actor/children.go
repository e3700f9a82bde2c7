package actor

import (
	"cmp"
	"slices"
	"sync"
)

// childSet keeps a cell's children in spawn order, so that stopping them and
// restarting them (AllForOne) happens in an order that is the same on every
// run. The owning cell's mu guards it, and the childSlot of every child in
// it.
//
// Children are always local cells, and each child remembers its position in
// its parent's list (childSlot), so adding and removing is a slice store, not
// a map update: a guardian with many short-lived children (spawn+stop)
// touches no hash table. Removal leaves a hole that a compaction closes once
// holes are the majority, so removing is O(1) amortized.
//
// A child is recognised by its cell, not by name: a name freed by a stop can
// be spawned again before the parent has processed the old child's
// Terminated, and a remote process may carry an ID equal to a local child's.
type childSet struct {
	list []*cell
	live int
}

// childInline is how many children fit in the allocation of the set itself.
const childInline = 8

// newChildSet returns an empty set whose first childInline slots share its
// allocation: a parent's first eight children cost it one allocation
// instead of the set and four growing slices (1, 2, 4, 8), which is most of
// the bookkeeping of a tree of short-lived actors (SkyNet's parents have
// ten). Past childInline the list grows by append and the inline slots are
// left unused. TestChildSetInline pins it.
func newChildSet() *childSet {
	x := &struct {
		s childSet
		a [childInline]*cell
	}{}
	x.s.list = x.a[:0]
	return &x.s
}

func (s *childSet) add(ch *cell) {
	ch.childSlot = int32(len(s.list))
	s.list = append(s.list, ch)
	s.live++
}

// remove deletes ch when it is in the set. The caller has checked that ch
// is a child of the set's owner (its childSlot is guarded by the owner's
// lock).
func (s *childSet) remove(ch *cell) bool {
	if !s.contains(ch) {
		return false
	}
	s.list[ch.childSlot] = nil
	ch.childSlot = -1
	s.live--
	if len(s.list) > 16 && s.live < len(s.list)/2 {
		s.compact()
	}
	return true
}

func (s *childSet) compact() {
	j := 0
	for _, ch := range s.list {
		if ch != nil {
			s.list[j] = ch
			ch.childSlot = int32(j)
			j++
		}
	}
	clear(s.list[j:])
	s.list = s.list[:j]
}

func (s *childSet) contains(ch *cell) bool {
	i := int(ch.childSlot)
	return i >= 0 && i < len(s.list) && s.list[i] == ch
}

// snapshot returns the live children in spawn order.
func (s *childSet) snapshot() []*PID {
	out := make([]*PID, 0, s.live)
	for _, ch := range s.list {
		if ch != nil {
			out = append(out, ch.selfPID())
		}
	}
	return out
}

// kids returns the children of a guardian (kept in its System, so that
// other cells do not carry the field), nil for any other actor.
func (c *cell) kids() *guardianKids {
	s := c.sys
	if s == nil {
		return nil // a bare cell (tests)
	}
	switch c {
	case s.rootGuardian:
		return &s.guardianKids[0]
	case s.userGuardian:
		return &s.guardianKids[1]
	case s.systemGuardian:
		return &s.guardianKids[2]
	}
	return nil
}

// kidShards is the number of locks a guardian's children are spread over.
const kidShards = 8

// guardianKids holds a guardian's children. Guardians take spawns from
// outside (the root context, any goroutine) while their children stop on
// the workers, so one lock would be fought over by every spawn and every
// stop of a top-level actor; spreading the children over shards by their
// mailbox index lets a spawn and a stop meet on a lock rarely.
type guardianKids struct {
	shards [kidShards]kidShard
}

type kidShard struct {
	mu   sync.Mutex
	set  childSet
	wait bool // the guardian is winding down: stopping children must tell it
	_    [64 - 8 - 32 - 8]byte
}

func (g *guardianKids) shard(ch *cell) *kidShard {
	return &g.shards[uint64(ch.idx)%kidShards]
}

// windDown marks every shard as waited for and returns the children, in
// spawn order (their mailbox indexes are assigned in spawn order).
func (g *guardianKids) windDown(wait bool) []*PID {
	var kids []*cell
	for i := range g.shards {
		s := &g.shards[i]
		s.mu.Lock()
		s.wait = wait
		for _, ch := range s.set.list {
			if ch != nil {
				kids = append(kids, ch)
			}
		}
		s.mu.Unlock()
	}
	return spawnOrder(kids)
}

func (g *guardianKids) count() int {
	n := 0
	for i := range g.shards {
		s := &g.shards[i]
		s.mu.Lock()
		n += s.set.live
		s.mu.Unlock()
	}
	return n
}

func spawnOrder(kids []*cell) []*PID {
	slices.SortFunc(kids, func(a, b *cell) int { return cmp.Compare(a.idx, b.idx) })
	out := make([]*PID, len(kids))
	for i, ch := range kids {
		out[i] = ch.selfPID()
	}
	return out
}
