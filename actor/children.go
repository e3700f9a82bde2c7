package actor

// childSet keeps a cell's children in spawn order, so that stopping them and
// restarting them (AllForOne) happens in an order that is the same on every
// run. Removal leaves a hole that a compaction closes once holes are the
// majority, so removing is O(1) amortized even under a guardian with many
// children. The owning cell's mu guards it.
type childSet struct {
	list  []*PID
	index map[string]int // PID.ID → position in list
	live  int
}

func (s *childSet) add(pid *PID) {
	if s.index == nil {
		s.index = make(map[string]int)
	}
	s.index[pid.ID] = len(s.list)
	s.list = append(s.list, pid)
	s.live++
}

// remove deletes pid when it is a child (the whole PID must match: a
// Terminated of a remote process may carry an ID equal to a local child's).
func (s *childSet) remove(pid *PID) bool {
	i, ok := s.index[pid.ID]
	if !ok || !s.list[i].Equal(pid) {
		return false
	}
	s.list[i] = nil
	delete(s.index, pid.ID)
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
			s.index[p.ID] = j
			j++
		}
	}
	clear(s.list[j:])
	s.list = s.list[:j]
}

func (s *childSet) contains(pid *PID) bool {
	_, ok := s.index[pid.ID]
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
