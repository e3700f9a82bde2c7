package actor

// childSet keeps a cell's children in spawn order, so that stopping them and
// restarting them (AllForOne) happens in an order that is the same on every
// run. Removal leaves a hole that a compaction closes once holes are the
// majority, so removing is O(1) amortized even under a guardian with many
// children. The owning cell's mu guards it.
//
// Children are keyed by the identity of the *PID their spawn created (every
// Terminated and failure a child sends carries that same pointer), not by
// name: a name freed by a stop can be spawned again before the parent has
// processed the old child's Terminated, and a remote process may carry an
// ID equal to a local child's.
type childSet struct {
	list  []*PID
	index map[*PID]int // the child's own PID → position in list
	live  int
}

func (s *childSet) add(pid *PID) {
	if s.index == nil {
		s.index = make(map[*PID]int)
	}
	s.index[pid] = len(s.list)
	s.list = append(s.list, pid)
	s.live++
}

// remove deletes pid when it is a child.
func (s *childSet) remove(pid *PID) bool {
	i, ok := s.index[pid]
	if !ok {
		return false
	}
	s.list[i] = nil
	delete(s.index, pid)
	s.live--
	if len(s.list) > 16 && s.live < len(s.list)/2 {
		s.compact()
	}
	return true
}

func (s *childSet) compact() {
	j := 0
	for _, p := range s.list {
		if p != nil {
			s.list[j] = p
			s.index[p] = j
			j++
		}
	}
	clear(s.list[j:])
	s.list = s.list[:j]
}

func (s *childSet) contains(pid *PID) bool {
	_, ok := s.index[pid]
	return ok
}

// snapshot returns the live children in spawn order.
func (s *childSet) snapshot() []*PID {
	out := make([]*PID, 0, s.live)
	for _, p := range s.list {
		if p != nil {
			out = append(out, p)
		}
	}
	return out
}
