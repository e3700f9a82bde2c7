package actor

// pidSet is the set of PIDs an actor watches, in the order they were added
// (a removal moves the last one into the gap), so what an actor does for
// each of them (the Unwatches of its stop) goes out in an order that the
// operations alone decide: a deterministic system's trace is the same on
// every run (TestStopOfWatcherOfManyIsDeterministic). Most actors watch a
// few, found by a scan; one that watches many (a parent of thousands, the
// cluster's placement actor) also indexes them in a map, so a Watch and a
// Terminated cost the same whatever the count (a slice scan made watching
// n actors cost n²).
type pidSet struct {
	list []*PID
	m    map[pidKey]int // p's index in list; nil while the set is small
}

type pidKey struct{ address, id string }

// pidSetSmall is the largest set kept without the map.
const pidSetSmall = 8

func keyOf(p *PID) pidKey { return pidKey{p.Address, p.ID} }

// add adds p and reports whether it was not in the set.
func (s *pidSet) add(p *PID) bool {
	if s.m != nil {
		k := keyOf(p)
		if _, ok := s.m[k]; ok {
			return false
		}
		s.m[k] = len(s.list)
		s.list = append(s.list, p)
		return true
	}
	if indexPID(s.list, p) >= 0 {
		return false
	}
	s.list = append(s.list, p)
	if len(s.list) > pidSetSmall {
		s.m = make(map[pidKey]int, 4*pidSetSmall)
		for i, q := range s.list {
			s.m[keyOf(q)] = i
		}
	}
	return true
}

// remove removes p and reports whether it was in the set.
func (s *pidSet) remove(p *PID) bool {
	if s.m == nil {
		var ok bool
		s.list, ok = removePID(s.list, p)
		return ok
	}
	k := keyOf(p)
	i, ok := s.m[k]
	if !ok {
		return false
	}
	delete(s.m, k)
	last := len(s.list) - 1
	if i != last {
		s.list[i] = s.list[last]
		s.m[keyOf(s.list[i])] = i
	}
	s.list[last] = nil
	s.list = s.list[:last]
	return true
}

// each calls fn for every PID of the set, in the set's order.
func (s *pidSet) each(fn func(*PID)) {
	for _, p := range s.list {
		fn(p)
	}
}
