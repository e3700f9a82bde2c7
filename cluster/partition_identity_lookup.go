package cluster

import (
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strings"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// LookupOption customises a PartitionIdentityLookup with things that are
// code, not configuration.
type LookupOption func(*PartitionIdentityLookup)

// WithSelf names this node's member ID. Without it the lookup never treats
// an owner as local (client behaviour).
func WithSelf(memberID string) LookupOption {
	return func(p *PartitionIdentityLookup) { p.self = memberID }
}

// WithActivator replaces DefaultActivator.
func WithActivator(a Activator) LookupOption {
	return func(p *PartitionIdentityLookup) {
		if a != nil {
			p.activate = a
		}
	}
}

// WithHashStrategy replaces the rendezvous strategy built from
// LookupConfig.Hash.
func WithHashStrategy(s HashStrategy) LookupOption {
	return func(p *PartitionIdentityLookup) {
		if s != nil {
			p.strategy = s
		}
	}
}

// WithLedger makes the lookup grant local leases from l (shared with the
// cluster runtime) instead of a private ledger.
func WithLedger(l *ActivationLedger) LookupOption {
	return func(p *PartitionIdentityLookup) {
		if l != nil {
			p.ledger = l
		}
	}
}

type lookupMode uint8

const (
	modeUnset lookupMode = iota
	modeMember
	modeClient
)

// memberRef names a member incarnation without formatting its Key.
type memberRef struct {
	id          string
	incarnation uint64
}

func refOf(m Member) memberRef { return memberRef{id: m.ID, incarnation: m.Incarnation} }

// ownerSlot is one owner incarnation, shared by every record it owns, so
// that a view change examines each owner once rather than once per record,
// and a member that leaves costs only its own records.
type ownerSlot struct {
	member  Member
	key     string  // member.Key()
	weight  float64 // effective weight in the current view
	lane    uint64  // rendezvous member lane under the lookup's lane seed, when hasLane
	hasLane bool
	recs    []*activationRecord // the records it owns; activationRecord.slotPos indexes it
}

// activationRecord is what the lookup knows about one activation.
type activationRecord struct {
	id       Identity
	pid      *actor.PID
	slot     *ownerSlot
	leaseID  uint64       // the local lease; 0 unless owner is this member
	token    FencingToken // its fencing token
	lastSeen time.Time
	idLane   uint64 // xxRound(identityHash) under the lookup's lane seed, when hasLane
	hasLane  bool
	cacheAt  cacheHint // where the lookup last put its PID in the cache
	// stale: the ring of the latest view picks another owner than slot (a
	// VirtualActorMoved was recorded). A record that is not stale is owned
	// by slot according to the current ring.
	stale    bool
	stalePos int    // index in PartitionIdentityLookup.stale, while stale
	slotPos  int    // index in slot.recs
	kindPos  int    // index in the kindRecords of id.Kind
	seen     uint64 // the UpdateTopology (updateSeq) that last examined it
}

// PartitionIdentityLookup is the partition identity lookup of seed 000: a
// registry of activation records, the node's PidCache (the only one, L6),
// the rendezvous ring of the current view and a ledger of the local
// leases. Owners are chosen by the ring; when the owner is this member the
// lookup acquires a lease before calling the Activator.
//
// It is driven by one goroutine and is not safe for concurrent use, except
// Cache and Ledger, whose methods are. It starts no goroutines and reads no
// clock: every time comes in as an argument.
type PartitionIdentityLookup struct {
	cfg      LookupConfig
	self     string
	mode     lookupMode
	kinds    []string
	strategy HashStrategy
	activate Activator
	ledger   *ActivationLedger
	cache    *PidCache

	topo            Topology // as given by the provider
	ring            Ring     // built from topo minus blocked members; nil before the first view
	blocked         map[memberRef]struct{}
	records         map[Identity]*activationRecord
	owners          map[memberRef]*ownerSlot // owners of the records, by incarnation
	byKind          map[string]*kindRecords  // the records of each kind, column-wise
	stale           []*activationRecord      // the stale records; activationRecord.stalePos indexes it
	present         map[memberRef]int        // UpdateTopology's index of the view, kept for its buckets
	sortKeys        []eventKey               // sortEvents' buffers
	sortKinds       []string
	joinHits        []int32 // checkJoin's buffers
	joinMask        []byte
	events          []VirtualActorEvent
	cacheDrops      removeBatch   // the moved records' identities, and the scratch of the cache's drops
	delta           ringChange    // ringDelta's result, reused by each update
	kindChanges     []*kindChange // its kind changes; the first kindChangesUsed are in use
	kindChangesUsed int

	// Record and slot lanes are rendezvous lanes under laneSeed (set by the
	// first rendezvous ring); laneless counts records without a lane.
	laneSeed  uint64
	seedSet   bool
	laneless  int
	updateSeq uint64

	ownerChecks  int // full owner computations made by UpdateTopology (tests)
	recordVisits int // records UpdateTopology examined one by one (tests)
}

var _ IdentityLookup = (*PartitionIdentityLookup)(nil)

// NewPartitionIdentityLookup returns a lookup with no view (Get answers
// ErrNoAuthority until UpdateTopology), or cfg's Validate error.
func NewPartitionIdentityLookup(cfg LookupConfig, opts ...LookupOption) (*PartitionIdentityLookup, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cache, err := NewPidCache(cfg.cacheConfig())
	if err != nil {
		return nil, err
	}
	p := &PartitionIdentityLookup{
		cfg:      cfg,
		strategy: NewRendezvous(cfg.Hash),
		activate: DefaultActivator,
		cache:    cache,
		blocked:  make(map[memberRef]struct{}),
		records:  make(map[Identity]*activationRecord),
		owners:   make(map[memberRef]*ownerSlot),
		byKind:   make(map[string]*kindRecords),
		present:  make(map[memberRef]int),
	}
	for _, o := range opts {
		o(p)
	}
	if p.ledger == nil {
		p.ledger = NewActivationLedger()
	}
	return p, nil
}

// Config returns the configuration.
func (p *PartitionIdentityLookup) Config() LookupConfig { return p.cfg }

// Cache returns the node's PidCache; safe for concurrent readers.
func (p *PartitionIdentityLookup) Cache() *PidCache { return p.cache }

// Ledger returns the ledger of local leases; safe for concurrent use.
func (p *PartitionIdentityLookup) Ledger() *ActivationLedger { return p.ledger }

// Topology returns the current view as given to UpdateTopology.
func (p *PartitionIdentityLookup) Topology() Topology { return p.topo }

// Len returns the number of activation records.
func (p *PartitionIdentityLookup) Len() int { return len(p.records) }

// SetupMember puts the lookup in member mode hosting kinds. Kinds must be
// non-empty and distinct (ErrInvalidKinds).
func (p *PartitionIdentityLookup) SetupMember(kinds []string) error {
	return p.setup(modeMember, kinds)
}

// SetupClient puts the lookup in client mode: it never owns an identity.
func (p *PartitionIdentityLookup) SetupClient(kinds []string) error {
	return p.setup(modeClient, kinds)
}

func (p *PartitionIdentityLookup) setup(mode lookupMode, kinds []string) error {
	seen := make(map[string]struct{}, len(kinds))
	for _, k := range kinds {
		if k == "" {
			return fmt.Errorf("%w: empty kind", ErrInvalidKinds)
		}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("%w: duplicate kind %q", ErrInvalidKinds, k)
		}
		seen[k] = struct{}{}
	}
	p.mode, p.kinds = mode, slices.Clone(kinds)
	return nil
}

// Get returns the PID of id (L2). A PidCache hit returns at once, records
// no event and does not allocate. On a miss the ring selects the owner; a
// record on that owner is a Hit; a record on another member is
// Reactivated on the owner; no record is Activated. Errors: ErrNoAuthority
// (no view or no members), ErrNoSuchKind, ErrInvalidIdentity,
// *ActivationFailedError (activator failure, or the local lease is held).
func (p *PartitionIdentityLookup) Get(id Identity, now time.Time) (*actor.PID, error) {
	if pid, ok := p.cache.Get(id, now); ok {
		return pid, nil
	}
	return p.resolve(id, now)
}

func (p *PartitionIdentityLookup) resolve(id Identity, now time.Time) (*actor.PID, error) {
	if err := id.Validate(); err != nil {
		return nil, err
	}
	if p.ring == nil {
		return nil, ErrNoAuthority
	}
	owner, err := p.ring.Owner(id)
	if err != nil {
		return nil, err
	}
	kind := VirtualActorActivated
	if rec := p.records[id]; rec != nil {
		if sameMember(rec.slot.member, owner) {
			rec.lastSeen = now
			if rec.stale || !rec.hasLane {
				p.ownerConfirmed(rec)
			}
			rec.cacheAt = p.cache.put(id, rec.pid, rec.slot.key, now)
			p.events = append(p.events, VirtualActorEvent{Kind: VirtualActorHit, Identity: id, PID: rec.pid, Owner: rec.slot.key, LeaseID: rec.leaseID, Token: rec.token})
			return rec.pid, nil
		}
		p.forget(rec)
		kind = VirtualActorReactivated
	}
	rec, err := p.activateOn(id, owner)
	if err != nil {
		return nil, &ActivationFailedError{Key: id, Err: err}
	}
	rec.lastSeen = now
	p.track(rec)
	rec.cacheAt = p.cache.put(id, rec.pid, rec.slot.key, now)
	p.events = append(p.events, VirtualActorEvent{Kind: kind, Identity: id, PID: rec.pid, Owner: rec.slot.key, LeaseID: rec.leaseID, Token: rec.token})
	return rec.pid, nil
}

func (p *PartitionIdentityLookup) activateOn(id Identity, owner Member) (*activationRecord, error) {
	req := ActivationRequest{Identity: id, Owner: owner, TopologyHash: p.ring.Hash(), Epoch: p.ring.Epoch()}
	if p.self != "" && owner.ID == p.self {
		if p.mode != modeMember || !slices.Contains(p.kinds, id.Kind) {
			return nil, fmt.Errorf("%w: this member owns %s by the view but did not set up kind %q", ErrNoSuchKind, id, id.Kind)
		}
		lease, err := p.ledger.Acquire(id, owner.ID, req.TopologyHash)
		if err != nil {
			return nil, err
		}
		req.Local, req.Lease = true, lease
	}
	pid, err := p.activate(req)
	if err == nil && pid == nil {
		err = errors.New("activator returned a nil PID")
	}
	if err != nil {
		if req.Local {
			_, _ = p.ledger.Release(id, req.Lease.LeaseID)
		}
		return nil, err
	}
	return &activationRecord{id: id, pid: pid, slot: p.slotFor(owner), leaseID: req.Lease.LeaseID, token: req.Lease.Token}, nil
}

// slotFor returns the owner slot of m's incarnation, creating it.
func (p *PartitionIdentityLookup) slotFor(m Member) *ownerSlot {
	ref := refOf(m)
	if s := p.owners[ref]; s != nil {
		return s
	}
	s := &ownerSlot{member: m, key: m.Key(), weight: float64(m.EffectiveWeight())}
	p.owners[ref] = s
	return s
}

// forget drops a record and releases its local lease. A lease that the
// runtime already released or replaced is left alone.
func (p *PartitionIdentityLookup) forget(rec *activationRecord) {
	p.untrack(rec)
	if rec.leaseID != 0 {
		_, _ = p.ledger.Release(rec.id, rec.leaseID)
	}
}

func sameMember(a, b Member) bool { return a.ID == b.ID && a.Incarnation == b.Incarnation }

// RemovePID forgets id's record (releasing its local lease) and its cached
// PID (cache event CacheRemoved). The runtime calls it when the activation
// terminated or a send to the PID dead-lettered.
func (p *PartitionIdentityLookup) RemovePID(id Identity) {
	if rec := p.records[id]; rec != nil {
		p.forget(rec)
	}
	p.cache.Remove(id)
}

// UpdateTopology installs view t (L3, V1.1, B2.1). While t.Hash equals
// the current hash and the members are unchanged, it does nothing and every
// owner decision is reused (B2.2). Otherwise it rebuilds the ring, moves the
// ledger to the view, drops the records and cached PIDs of members absent
// from t (VirtualActorInvalidated, CacheMemberAbsent), and for records whose
// owner changed drops the cached PID (CacheOwnerMoved) and records
// VirtualActorMoved. A view with a lower epoch than the current one is
// refused with ErrStaleView and changes nothing.
//
// Its cost follows the change, not the number of records: a member that
// left costs its own records (found through its owner slot); with
// rendezvous rings of the same seed, a joining candidate costs one score
// comparison per record of its kinds (against the owner score cached in
// kindRecords) and work only for the records it takes; records already
// moved are rechecked. Other changes (another ring type or seed, a weight
// change in a weighted ring) compute every owner.
func (p *PartitionIdentityLookup) UpdateTopology(t Topology) error {
	if p.ring != nil && t.Hash == p.topo.Hash && sameMembers(t.Members, p.topo.Members) {
		return nil
	}
	if p.ring != nil && t.Epoch < p.topo.Epoch {
		return fmt.Errorf("%w: epoch %d < current %d", ErrStaleView, t.Epoch, p.topo.Epoch)
	}
	if err := p.ledger.SetView(t.Hash, t.Epoch); err != nil {
		return err
	}
	present := p.present
	clear(present)
	for i, m := range t.Members {
		present[refOf(m)] = i
	}
	for key := range p.blocked {
		if _, ok := present[key]; !ok {
			delete(p.blocked, key) // gone from the view: nothing left to exclude
		}
	}
	prev := p.ring
	p.topo = t
	p.rebuild()
	delta := p.ringDelta(prev, p.ring)
	rr := p.laneRing()
	p.updateSeq++
	start := len(p.events)
	// Room for the events of a leave and a join (each moves about
	// records/members records), so that they are not copied as they grow.
	room := len(p.stale) + 2*len(p.records)/max(1, len(t.Members)) + 16
	p.events = slices.Grow(p.events, room)
	p.cache.reserveEvents(room)
	for ref, s := range p.owners {
		if i, ok := present[ref]; ok {
			s.weight = float64(t.Members[i].EffectiveWeight())
			continue
		}
		for n := len(s.recs); n > 0; n = len(s.recs) {
			rec := s.recs[n-1]
			p.recordVisits++
			p.forget(rec)
			p.events = append(p.events, VirtualActorEvent{Kind: VirtualActorInvalidated, Identity: rec.id, PID: rec.pid, Owner: s.key, LeaseID: rec.leaseID, Token: rec.token})
		}
		delete(p.owners, ref)
	}
	if delta == nil || rr == nil || p.laneless > 0 {
		for _, rec := range p.records {
			p.checkOwner(rec)
		}
	} else {
		p.checkChanged(delta)
	}
	p.cache.removeBatch(&p.cacheDrops, CacheOwnerMoved)
	p.sortEvents(p.events[start:])
	p.cache.invalidateAbsent(func(ref memberRef) bool {
		_, ok := present[ref]
		return ok
	}, &p.cacheDrops)
	return nil
}

// rebuild builds the ring from the view without the blocked members. The
// ring keeps the provider's hash and epoch: leases and requests are bound
// to the provider's view.
func (p *PartitionIdentityLookup) rebuild() {
	t := withoutBlocked(p.topo, p.blocked, refOf)
	if inc, ok := p.strategy.(incrementalStrategy); ok {
		p.ring = inc.BuildFrom(p.ring, t)
		return
	}
	p.ring = p.strategy.Build(t)
}

// incrementalStrategy is a HashStrategy that builds the ring of a view
// faster given the ring of the previous one (Rendezvous.BuildFrom). The
// ring must equal what Build(t) returns.
type incrementalStrategy interface {
	BuildFrom(prev Ring, t Topology) Ring
}

func sameMembers(a, b []Member) bool {
	return slices.EqualFunc(a, b, func(x, y Member) bool {
		return sameMember(x, y) && x.Address == y.Address && x.Weight == y.Weight && slices.Equal(x.Kinds, y.Kinds)
	})
}

// OnMemberLeft drops the records and cached PIDs owned by m (matched by
// Member.Key): VirtualActorInvalidated and CacheMemberLeft events (L3,
// V3.5). The ring is not changed; the view that removes m arrives through
// UpdateTopology.
func (p *PartitionIdentityLookup) OnMemberLeft(m Member) {
	p.invalidateOwner(m)
	p.cache.InvalidateMember(m.Key())
}

// invalidateOwner drops the records of m's incarnation (Member.Key equality
// is incarnation equality) and returns their identities, sorted.
func (p *PartitionIdentityLookup) invalidateOwner(m Member) []Identity {
	s := p.owners[refOf(m)]
	if s == nil || len(s.recs) == 0 {
		return nil
	}
	start := len(p.events)
	ids := make([]Identity, 0, len(s.recs))
	for n := len(s.recs); n > 0; n = len(s.recs) {
		rec := s.recs[n-1]
		p.forget(rec)
		ids = append(ids, rec.id)
		p.events = append(p.events, VirtualActorEvent{Kind: VirtualActorInvalidated, Identity: rec.id, PID: rec.pid, Owner: s.key, LeaseID: rec.leaseID, Token: rec.token})
	}
	p.sortEvents(p.events[start:])
	slices.SortFunc(ids, compareIdentities)
	return ids
}

// BlockMember applies a block-list entry for m (V1.4, B2.3), in the order
// of seed 002: the ledger revokes m's leases, then m's records and cached
// PIDs are invalidated, then m is left out of owner selection until a view
// without it (or with a new incarnation) arrives. It returns the revoked
// leases and the invalidated identities, for a BlockListApplied event.
func (p *PartitionIdentityLookup) BlockMember(m Member) (revoked []Lease, invalidated []Identity) {
	revoked = p.ledger.RevokeMember(m.ID)
	invalidated = p.invalidateOwner(m)
	p.cache.InvalidateMember(m.Key())
	if _, already := p.blocked[refOf(m)]; !already {
		p.blocked[refOf(m)] = struct{}{}
		if p.ring != nil {
			p.rebuild()
		}
	}
	return revoked, invalidated
}

// PassivateIdle drops every record last seen idleTTL or longer before now,
// releasing its local lease and its cached PID (VirtualActorPassivated,
// CachePassivated).
func (p *PartitionIdentityLookup) PassivateIdle(now time.Time, idleTTL time.Duration) {
	start := len(p.events)
	for id, rec := range p.records {
		if now.Sub(rec.lastSeen) < idleTTL {
			continue
		}
		p.forget(rec)
		p.cache.RemoveWithReason(id, CachePassivated)
		p.events = append(p.events, VirtualActorEvent{Kind: VirtualActorPassivated, Identity: id, PID: rec.pid, Owner: rec.slot.key, LeaseID: rec.leaseID, Token: rec.token})
	}
	p.sortEvents(p.events[start:])
}

// DrainEvents returns the pending activation events, oldest first (events
// of one call are sorted by identity), and forgets them. They are not
// bounded: the driving goroutine drains them after each call.
func (p *PartitionIdentityLookup) DrainEvents() []VirtualActorEvent {
	out := p.events
	p.events = nil
	return out
}

// DrainCacheEvents returns and forgets the pending PidCache events.
func (p *PartitionIdentityLookup) DrainCacheEvents() []PidCacheEvent { return p.cache.DrainEvents() }

// ReuseEventBuffers hands back slices returned by DrainEvents and
// DrainCacheEvents once the caller is done with their events (nil for
// either is fine): the next events are recorded into them, so that a view
// change, which records one event per record it drops or moves, does not
// allocate new buffers each time. The caller must not read or keep the
// slices afterwards. The runtime calls it after publishing (copies of) the
// events.
func (p *PartitionIdentityLookup) ReuseEventBuffers(es []VirtualActorEvent, ces []PidCacheEvent) {
	if len(p.events) == 0 && cap(es) > cap(p.events) {
		clear(es) // drop the PIDs and strings for the collector
		p.events = es[:0]
	}
	p.cache.reuseEvents(ces)
}

// sortEvents sorts es by identity. It sorts small integer keys (the rank
// of the event's kind and the first eight bytes of its ID as a number,
// which order all but IDs sharing those bytes) in a buffer it keeps, with
// the comparisons inlined, orders the rare runs of equal keys by the whole
// ID, then moves each event once, in place: an event is large, and a view
// change may record hundreds.
func (p *PartitionIdentityLookup) sortEvents(es []VirtualActorEvent) {
	if len(es) < 16 {
		slices.SortFunc(es, byIdentity)
		return
	}
	kinds := p.sortKinds[:0]
	keys := p.sortKeys[:0]
	rank := -1
	for i := range es {
		id := &es[i].Identity
		if rank < 0 || id.Kind != kinds[rank] {
			rank = slices.Index(kinds, id.Kind)
			if rank < 0 {
				if len(kinds) == maxSortKinds {
					clear(kinds)
					p.sortKinds, p.sortKeys = kinds[:0], keys[:0]
					slices.SortFunc(es, byIdentity)
					return
				}
				rank = len(kinds)
				kinds = append(kinds, id.Kind)
			}
		}
		keys = append(keys, eventKey{rank: uint32(rank), at: int32(i), prefix: idPrefix(id.ID)})
	}
	if len(kinds) > 1 { // ranks in encounter order -> ranks in kind order
		var order, byRank [maxSortKinds]uint32
		for r := range kinds {
			order[r] = uint32(r)
		}
		slices.SortFunc(order[:len(kinds)], func(a, b uint32) int { return strings.Compare(kinds[a], kinds[b]) })
		for r, was := range order[:len(kinds)] {
			byRank[was] = uint32(r)
		}
		for i := range keys {
			keys[i].rank = byRank[keys[i].rank]
		}
	}
	clear(kinds)
	p.sortKinds = kinds[:0]
	sortEventKeys(keys, 2*bits.Len(uint(len(keys))))
	for i := 1; i < len(keys); {
		j := i
		for j < len(keys) && keys[j].rank == keys[i-1].rank && keys[j].prefix == keys[i-1].prefix {
			j++
		}
		if j > i { // keys[i-1:j] share kind and prefix: order them by ID
			slices.SortFunc(keys[i-1:j], func(a, b eventKey) int { return strings.Compare(es[a.at].Identity.ID, es[b.at].Identity.ID) })
		}
		i = j + 1
	}
	// keys[i].at is the event that goes to i: follow each cycle of that
	// permutation once, marking the places filled with -1.
	for i := range keys {
		if keys[i].at < 0 {
			continue
		}
		held := es[i]
		for j := i; ; {
			from := int(keys[j].at)
			keys[j].at = -1
			if from == i {
				es[j] = held
				break
			}
			es[j] = es[from]
			j = from
		}
	}
	p.sortKeys = keys[:0]
}

func byIdentity(a, b VirtualActorEvent) int { return compareIdentities(a.Identity, b.Identity) }

// maxSortKinds bounds the kinds sortEvents ranks; events of more kinds are
// sorted by comparing identities.
const maxSortKinds = 16

type eventKey struct {
	rank   uint32 // of the kind, in kind order
	at     int32  // position in the unsorted events
	prefix uint64 // idPrefix of the ID
}

func (a eventKey) less(b eventKey) bool {
	return a.rank < b.rank || (a.rank == b.rank && a.prefix < b.prefix)
}

// sortEventKeys sorts keys by (rank, prefix), in no particular order among
// equal keys. It is a quicksort (median-of-three pivot, insertion sort
// below 12 keys) with the comparison inlined: slices.SortFunc's call per
// comparison was most of the sorting time. After depth levels of
// partitioning a range is finished by heapsort, so that no input makes it
// quadratic; it returns how many ranges were (for tests).
func sortEventKeys(keys []eventKey, depth int) (heapsorted int) {
	for len(keys) > 12 {
		if depth == 0 {
			heapSortEventKeys(keys)
			return heapsorted + 1
		}
		depth--
		last, m := len(keys)-1, len(keys)/2
		if keys[m].less(keys[0]) {
			keys[m], keys[0] = keys[0], keys[m]
		}
		if keys[last].less(keys[m]) {
			keys[last], keys[m] = keys[m], keys[last]
			if keys[m].less(keys[0]) {
				keys[m], keys[0] = keys[0], keys[m]
			}
		}
		// keys[0] <= keys[m] <= keys[last]: the median is the pivot, at 0;
		// keys[0] and keys[last] bound both scans.
		keys[0], keys[m] = keys[m], keys[0]
		pivot := keys[0]
		i, j := 1, last
		for {
			for keys[i].less(pivot) {
				i++
			}
			for pivot.less(keys[j]) {
				j--
			}
			if i >= j {
				break
			}
			keys[i], keys[j] = keys[j], keys[i]
			i, j = i+1, j-1
		}
		keys[0], keys[j] = keys[j], keys[0]
		if left, right := keys[:j], keys[j+1:]; len(left) < len(right) {
			heapsorted += sortEventKeys(left, depth)
			keys = right
		} else {
			heapsorted += sortEventKeys(right, depth)
			keys = left
		}
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j].less(keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return heapsorted
}

func heapSortEventKeys(keys []eventKey) {
	for i := len(keys)/2 - 1; i >= 0; i-- {
		siftDownEventKeys(keys, i, len(keys))
	}
	for end := len(keys) - 1; end > 0; end-- {
		keys[0], keys[end] = keys[end], keys[0]
		siftDownEventKeys(keys, 0, end)
	}
}

func siftDownEventKeys(keys []eventKey, root, end int) {
	for {
		child := 2*root + 1
		if child >= end {
			return
		}
		if child+1 < end && keys[child].less(keys[child+1]) {
			child++
		}
		if !keys[root].less(keys[child]) {
			return
		}
		keys[root], keys[child] = keys[child], keys[root]
		root = child
	}
}

// idPrefix is the first eight bytes of s as a big-endian number, padded
// with zeros: idPrefix(a) < idPrefix(b) implies a < b, and a < b implies
// idPrefix(a) <= idPrefix(b).
func idPrefix(s string) uint64 {
	var p uint64
	for i := range 8 {
		p <<= 8
		if i < len(s) {
			p |= uint64(s[i])
		}
	}
	return p
}
