package actor

import "strconv"

// freeSeq appends to b (a generated ID up to its '$') the next sequence
// number whose ID no named process holds, and returns the number and the
// ID. A name of the generated form ("$5", "#3/$5", "worker$5") is a name
// like any other, so a user can take the ID the sequence reaches later;
// the spawn that reached it failed with ErrNameExists (Spawn returned nil)
// though nothing was wrong with it. It now skips the number
// (TestGeneratedIDSkipsATakenName). The check costs one atomic load until
// a name of the generated form is registered (registry.namedSeqFlag). A
// name taken between this check and the registration still fails that
// spawn (addSeq), as before.
func (s *System) freeSeq(b []byte) (uint64, []byte) {
	n := len(b)
	for {
		seq := s.idSeq.Add(1)
		b = strconv.AppendUint(b[:n], seq, 36)
		if !s.registry.namedHolds(b) {
			return seq, b
		}
		s.registry.finishSeq(seq)
	}
}

// namedHolds reports whether a named process holds the ID id, one of the
// generated form.
func (r *registry) namedHolds(id []byte) bool {
	flag := &r.namedSeqTop
	if len(id) > 0 && id[0] == '#' {
		flag = &r.namedSeqNested
	}
	if !flag.Load() {
		return false
	}
	sh := r.shard(string(id))
	sh.mu.RLock()
	_, taken := sh.m[string(id)]
	sh.mu.RUnlock()
	return taken
}
