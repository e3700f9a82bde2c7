package actor

// pidSet is the set of PIDs an actor watches. Most actors watch a few, kept
// in a slice; one that watches many (a parent of thousands, the cluster's
// placement actor) switches to a map, so a Watch and a Terminated cost the
// same whatever the count (a slice scan made watching n actors cost n²).
type pidSet struct {
	list []*PID
	m    map[pidKey]*PID
}

type pidKey struct{ address, id string }

// pidSetSmall is the largest set kept as a slice.
const pidSetSmall = 8

func keyOf(p *PID) pidKey { return pidKey{p.Address, p.ID} }

// add adds p and reports whether it was not in the set.
func (s *pidSet) add(p *PID) bool {
	if s.m != nil {
		k := keyOf(p)
		if _, ok := s.m[k]; ok {
			return false
		}
		s.m[k] = p
		return true
	}
	if indexPID(s.list, p) >= 0 {
		return false
	}
	if len(s.list) < pidSetSmall {
		s.list = append(s.list, p)
		return true
	}
	s.m = make(map[pidKey]*PID, 4*pidSetSmall)
	for _, q := range s.list {
		s.m[keyOf(q)] = q
	}
	s.list = nil
	s.m[keyOf(p)] = p
	return true
}

// remove removes p and reports whether it was in the set.
func (s *pidSet) remove(p *PID) bool {
	if s.m != nil {
		k := keyOf(p)
		if _, ok := s.m[k]; !ok {
			return false
		}
		delete(s.m, k)
		return true
	}
	var ok bool
	s.list, ok = removePID(s.list, p)
	return ok
}

// each calls fn for every PID of the set.
func (s *pidSet) each(fn func(*PID)) {
	for _, p := range s.list {
		fn(p)
	}
	for _, p := range s.m {
		fn(p)
	}
}
