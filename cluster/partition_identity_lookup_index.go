package cluster

import (
	"math"
)

// kindRecords holds the records of one kind column-wise, with each record's
// identity lane and its owner's score, so that a join tests a record
// against a joining candidate by reading two words, without touching the
// record: the join scan over 10k records stays within the cache.
type kindRecords struct {
	recs  []*activationRecord // activationRecord.kindPos indexes the columns
	lanes []uint64            // idLane
	best  []uint64            // the owner's rendezvous score (scoreFinish(slot.lane ^ idLane))
	bestW []float64           // the owner's weighted score with slot.weight
}

// track adds rec to the lookup's indexes: by identity, by owner and by kind.
func (p *PartitionIdentityLookup) track(rec *activationRecord) {
	p.records[rec.id] = rec
	s := rec.slot
	rec.slotPos = len(s.recs)
	s.recs = append(s.recs, rec)
	kr := p.byKind[rec.id.Kind]
	if kr == nil {
		kr = &kindRecords{}
		p.byKind[rec.id.Kind] = kr
	}
	rec.kindPos = len(kr.recs)
	kr.recs = append(kr.recs, rec)
	kr.lanes = append(kr.lanes, 0)
	kr.best = append(kr.best, 0)
	kr.bestW = append(kr.bestW, 0)
	rec.hasLane, rec.stale = false, false
	p.laneless++
	p.ownerConfirmed(rec)
}

// untrack removes rec from every index.
func (p *PartitionIdentityLookup) untrack(rec *activationRecord) {
	delete(p.records, rec.id)
	if rec.stale {
		p.unmarkStale(rec)
	}
	if !rec.hasLane {
		p.laneless--
	}
	s := rec.slot
	last := len(s.recs) - 1
	if rec.slotPos != last {
		moved := s.recs[last]
		s.recs[rec.slotPos], moved.slotPos = moved, rec.slotPos
	}
	s.recs[last] = nil
	s.recs = s.recs[:last]
	kr := p.byKind[rec.id.Kind]
	last = len(kr.recs) - 1
	if i := rec.kindPos; i != last {
		moved := kr.recs[last]
		kr.recs[i], moved.kindPos = moved, i
		kr.lanes[i], kr.best[i], kr.bestW[i] = kr.lanes[last], kr.best[last], kr.bestW[last]
	}
	kr.recs[last] = nil
	kr.recs, kr.lanes, kr.best, kr.bestW = kr.recs[:last], kr.lanes[:last], kr.best[:last], kr.bestW[:last]
	if last == 0 {
		delete(p.byKind, rec.id.Kind)
	}
}

// laneRing returns the current ring if it is a rendezvous ring, making its
// seed the lane seed: lanes of another seed are dropped.
func (p *PartitionIdentityLookup) laneRing() *rendezvousRing {
	rr, ok := p.ring.(*rendezvousRing)
	if !ok {
		return nil
	}
	if p.seedSet && p.laneSeed == rr.seed {
		return rr
	}
	p.laneSeed, p.seedSet = rr.seed, true
	for _, s := range p.owners {
		s.hasLane = false
	}
	for _, rec := range p.records {
		if rec.hasLane {
			rec.hasLane = false
			p.laneless++
		}
	}
	return rr
}

// ownerConfirmed records that the current ring picks rec.slot for rec: rec
// is not stale, and its lane and cached owner score are those of the ring.
func (p *PartitionIdentityLookup) ownerConfirmed(rec *activationRecord) {
	if rec.stale {
		p.unmarkStale(rec)
	}
	rr := p.laneRing()
	if rr == nil {
		return
	}
	s := rec.slot
	if !s.hasLane {
		s.lane, s.hasLane = memberLane(rr.seed, memberHash(rr.seed, s.member.ID)), true
	}
	if !rec.hasLane {
		rec.idLane, rec.hasLane = xxRound(identityHash(rr.seed, rec.id)), true
		p.laneless--
	}
	kr := p.byKind[rec.id.Kind]
	best := scoreFinish(s.lane ^ rec.idLane)
	kr.lanes[rec.kindPos], kr.best[rec.kindPos] = rec.idLane, best
	kr.bestW[rec.kindPos] = 0
	if rr.weighted {
		kr.bestW[rec.kindPos] = -s.weight / math.Log(unitInterval(best))
	}
}

// checkOwner computes rec's owner under the new ring once per
// UpdateTopology: a record whose owner changed becomes stale (its cached
// PID is dropped, VirtualActorMoved), one whose owner stayed is confirmed.
func (p *PartitionIdentityLookup) checkOwner(rec *activationRecord) {
	if rec.seen == p.updateSeq {
		return
	}
	rec.seen = p.updateSeq
	p.recordVisits++
	p.ownerChecks++
	if owner, err := p.ring.Owner(rec.id); err == nil && sameMember(owner, rec.slot.member) {
		p.ownerConfirmed(rec)
		return
	}
	p.moved(rec)
}

// moved records that the new ring picks another owner than rec.slot: rec
// becomes stale, VirtualActorMoved is recorded and its cached PID is queued
// for UpdateTopology to drop, with the others, in one batch.
func (p *PartitionIdentityLookup) moved(rec *activationRecord) {
	rec.seen = p.updateSeq
	if !rec.stale {
		rec.stale, rec.stalePos = true, len(p.stale)
		p.stale = append(p.stale, rec)
	}
	p.cacheDrops.add(rec.id, rec.cacheAt) // UpdateTopology drops their cached PIDs
	p.events = append(p.events, VirtualActorEvent{Kind: VirtualActorMoved, Identity: rec.id, PID: rec.pid, Owner: rec.slot.key, LeaseID: rec.leaseID, Token: rec.token})
}

// checkChanged checks the records a view change may move, given that
// every record has a lane and that d describes the change: every record of
// a kind that appeared or vanished, the records of owners that stopped
// being candidates of their kind, the records a joining candidate
// outscores, and the stale records.
func (p *PartitionIdentityLookup) checkChanged(d *ringChange) {
	for kind, kc := range d.kinds {
		kr := p.byKind[kind]
		if kr == nil {
			continue
		}
		if kc.full {
			for _, rec := range kr.recs {
				p.checkOwner(rec)
			}
			continue
		}
		for _, s := range kc.removed {
			for _, rec := range s.recs {
				if rec.id.Kind == kind {
					p.checkOwner(rec)
				}
			}
		}
		if len(kc.added) > 0 {
			p.checkJoin(kr, kc.added, d.weighted)
		}
	}
	// From the end: a record confirmed here leaves the slice, replaced by
	// its last element, which was checked already.
	for i := len(p.stale) - 1; i >= 0; i-- {
		p.checkOwner(p.stale[i])
	}
}

// unmarkStale takes the stale rec out of p.stale.
func (p *PartitionIdentityLookup) unmarkStale(rec *activationRecord) {
	last := len(p.stale) - 1
	if moved := p.stale[last]; moved != rec {
		p.stale[rec.stalePos], moved.stalePos = moved, rec.stalePos
	}
	p.stale[last] = nil
	p.stale = p.stale[:last]
	rec.stale = false
}

// checkJoin handles the records of kr that a candidate of added scores at
// least as high for as their owner. A higher score settles it: the new
// ring's pick scores at least the joiner's, so it is not the owner, and the
// record moved. An equal score (a 64-bit or rounding tie) is settled by the
// full computation, which applies the ring's tie rule.
//
// The scan runs over every record of the kind, so it reads only the two
// columns and makes no call per record: it collects the positions reached
// (about one record in members+1 per joiner) and handles them after.
func (p *PartitionIdentityLookup) checkJoin(kr *kindRecords, added []rendezvousCandidate, weighted bool) {
	lanes := kr.lanes
	hits := p.joinHits[:0]
	if !weighted {
		best := kr.best[:len(lanes)]
		if len(added) == 1 {
			hits, p.joinMask = joinScan(lanes, best, added[0].lane, hits, p.joinMask)
		} else {
			for i, lane := range lanes {
				var top uint64
				for _, c := range added {
					top = max(top, scoreFinish(c.lane^lane))
				}
				if top >= best[i] {
					hits = append(hits, int32(i))
				}
			}
		}
		for _, i := range hits {
			top := uint64(0)
			for _, c := range added {
				top = max(top, scoreFinish(c.lane^lanes[i]))
			}
			p.joinTaken(kr.recs[i], top > best[i])
		}
	} else {
		bestW := kr.bestW[:len(lanes)]
		for i, lane := range lanes {
			top := 0.0
			for _, c := range added {
				top = max(top, -c.weight/math.Log(unitInterval(scoreFinish(c.lane^lane))))
			}
			if top >= bestW[i] {
				hits = append(hits, int32(i))
			}
		}
		for _, i := range hits {
			top := 0.0
			for _, c := range added {
				top = max(top, -c.weight/math.Log(unitInterval(scoreFinish(c.lane^lanes[i]))))
			}
			p.joinTaken(kr.recs[i], top > bestW[i])
		}
	}
	p.joinHits = hits[:0]
}

// joinTaken handles a record that a joining candidate scores at least as
// high for as its owner: surely when the score is higher.
func (p *PartitionIdentityLookup) joinTaken(rec *activationRecord, surely bool) {
	if !surely {
		p.checkOwner(rec)
		return
	}
	if rec.seen != p.updateSeq {
		p.recordVisits++
		p.moved(rec)
	}
}

// ringChange is what differs between two rendezvous rings of the same seed
// and mode, per kind. Rendezvous picks the highest score, so when the old
// ring picked an owner that is still a candidate with the same weight, the
// new ring picks it too unless a candidate that joined scores at least as
// high; removing other candidates cannot change the pick. checkJoin applies
// that test to every record of the kind with the owner score cached in
// kindRecords, so UpdateTopology computes an owner in full only for the few
// records a joining candidate may take (and for records already moved).
type ringChange struct {
	seed     uint64
	weighted bool
	kinds    map[string]*kindChange // kinds whose candidates changed
}

type kindChange struct {
	full    bool                  // the kind appeared or disappeared: compute every owner
	added   []rendezvousCandidate // candidates of the new ring only
	removed []*ownerSlot          // owners still in the view that are candidates no more
}

// ringDelta compares the ring before and after a view change. It returns
// nil (compute every owner) unless both are rendezvous rings with the same
// seed and mode and, when weighted, every member kept as a candidate kept
// its weight.
func (p *PartitionIdentityLookup) ringDelta(before, after Ring) *ringChange {
	o, ok := before.(*rendezvousRing)
	if !ok {
		return nil
	}
	n, ok := after.(*rendezvousRing)
	if !ok || o.seed != n.seed || o.weighted != n.weighted {
		return nil
	}
	d := p.resetDelta(n.seed, n.weighted)
	for kind := range o.kinds {
		if n.kinds[kind] == nil {
			d.kinds[kind] = p.newKindChange(true)
		}
	}
	sorted := o.sorted && n.sorted
	for kind, nk := range n.kinds {
		ok := o.kinds[kind]
		if ok == nil {
			d.kinds[kind] = p.newKindChange(true)
			continue
		}
		kc, same := p.candidateChange(o, n, ok.cands, nk.cands, sorted)
		if !same {
			return nil
		}
		if len(kc.added) > 0 || len(kc.removed) > 0 {
			d.kinds[kind] = kc
		}
	}
	return d
}

// resetDelta returns the lookup's ringChange, emptied, for a new view
// change. It and its kindChanges are reused from one UpdateTopology to the
// next (a ringDelta is read only within the update that made it), so that
// an update allocates no map or slices to describe the change.
func (p *PartitionIdentityLookup) resetDelta(seed uint64, weighted bool) *ringChange {
	d := &p.delta
	d.seed, d.weighted = seed, weighted
	if d.kinds == nil {
		d.kinds = make(map[string]*kindChange)
	}
	clear(d.kinds)
	for _, kc := range p.kindChanges[:p.kindChangesUsed] {
		clear(kc.removed) // slots that may leave the lookup
		kc.full, kc.added, kc.removed = false, kc.added[:0], kc.removed[:0]
	}
	p.kindChangesUsed = 0
	return d
}

// newKindChange returns an empty kindChange of the current ringChange.
func (p *PartitionIdentityLookup) newKindChange(full bool) *kindChange {
	if p.kindChangesUsed == len(p.kindChanges) {
		p.kindChanges = append(p.kindChanges, &kindChange{})
	}
	kc := p.kindChanges[p.kindChangesUsed]
	p.kindChangesUsed++
	kc.full = full
	return kc
}

// candidateChange compares the candidates of one kind in ring o (was) and
// n (now): those of n only, and the owner slots of those of o only. same
// is false when a weighted ring changed the weight of a kept candidate.
// Candidates are in view order, so with both views sorted one merge walk
// pairs them; otherwise they are paired by a map.
func (p *PartitionIdentityLookup) candidateChange(o, n *rendezvousRing, was, now []rendezvousCandidate, sorted bool) (kc *kindChange, same bool) {
	kc = p.newKindChange(false)
	gone := func(c rendezvousCandidate) {
		if s := p.owners[refOf(o.topo.Members[c.index])]; s != nil {
			kc.removed = append(kc.removed, s)
		}
	}
	if sorted {
		i, j := 0, 0
		for i < len(was) || j < len(now) {
			cmp := 0
			switch {
			case i == len(was):
				cmp = 1
			case j == len(now):
				cmp = -1
			default:
				cmp = compareMembers(o.topo.Members[was[i].index], n.topo.Members[now[j].index])
			}
			switch {
			case cmp < 0:
				gone(was[i])
				i++
			case cmp > 0:
				kc.added = append(kc.added, now[j])
				j++
			default:
				if n.weighted && was[i].weight != now[j].weight {
					return nil, false
				}
				i, j = i+1, j+1
			}
		}
		return kc, true
	}
	old := make(map[memberRef]rendezvousCandidate, len(was))
	for _, c := range was {
		old[refOf(o.topo.Members[c.index])] = c
	}
	for _, c := range now {
		ref := refOf(n.topo.Members[c.index])
		w, had := old[ref]
		if !had {
			kc.added = append(kc.added, c)
			continue
		}
		delete(old, ref)
		if n.weighted && w.weight != c.weight {
			return nil, false
		}
	}
	for _, c := range old {
		gone(c)
	}
	return kc, true
}
