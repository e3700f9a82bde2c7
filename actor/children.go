package actor

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
			out = append(out, ch.self)
		}
	}
	return out
}
