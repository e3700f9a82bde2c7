package cluster

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fraktor-go/fraktor/actor"
)

// CacheDropReason says why a PidCache entry left the cache.
type CacheDropReason uint8

// Reasons carried by PidCacheEvent.
const (
	// CacheEvicted: the entry's shard was full and CLOCK chose it.
	CacheEvicted CacheDropReason = iota + 1
	// CacheExpired: the entry's TTL passed (found by PurgeExpired or when
	// its slot was reused).
	CacheExpired
	// CacheRemoved: Remove was called for the key (RemovePID, a dead
	// letter, a terminated activation).
	CacheRemoved
	// CacheMemberLeft: InvalidateMember for the entry's owner (L3, V3.5).
	CacheMemberLeft
	// CacheMemberAbsent: InvalidateAbsent and the owner is not in the view (L3).
	CacheMemberAbsent
	// CacheOwnerMoved: a new view gave the identity another owner.
	CacheOwnerMoved
	// CachePassivated: the activation was passivated as idle.
	CachePassivated
)

func (r CacheDropReason) String() string {
	switch r {
	case CacheEvicted:
		return "evicted"
	case CacheExpired:
		return "expired"
	case CacheRemoved:
		return "removed"
	case CacheMemberLeft:
		return "member-left"
	case CacheMemberAbsent:
		return "member-absent"
	case CacheOwnerMoved:
		return "owner-moved"
	case CachePassivated:
		return "passivated"
	}
	return "unknown"
}

// PidCacheEvent reports an entry that left the PidCache.
type PidCacheEvent struct {
	Identity Identity
	PID      *actor.PID
	Member   string // owner's member key (Member.Key)
	Reason   CacheDropReason
}

// PidCacheConfig sizes a PidCache.
type PidCacheConfig struct {
	// Capacity is the maximum number of entries (> 0).
	Capacity int
	// TTL is how long an entry stays valid after Put (> 0).
	TTL time.Duration
	// EventCapacity bounds the undrained events; further events are dropped
	// and counted (>= 0; 0 records none).
	EventCapacity int
}

// DefaultPidCacheConfig returns capacity 1024, TTL 300 s and room for 4096
// events (L4).
func DefaultPidCacheConfig() PidCacheConfig {
	return PidCacheConfig{Capacity: 1024, TTL: 300 * time.Second, EventCapacity: 4096}
}

// Validate checks the ranges documented on the fields.
func (c PidCacheConfig) Validate() error {
	switch {
	case c.Capacity <= 0:
		return invalidConfig("pid cache capacity %d must be > 0", c.Capacity)
	case c.TTL <= 0:
		return invalidConfig("pid cache TTL %v must be > 0", c.TTL)
	case c.EventCapacity < 0:
		return invalidConfig("pid cache event capacity %d must be >= 0", c.EventCapacity)
	}
	return nil
}

// PidCache maps identities to the PIDs of their activations, with a TTL,
// a capacity bound and invalidation by key, by owner member and by absent
// members (L3, V3.5). It is the only PID cache of a node (L6): the identity
// lookup fills it and the cluster context reads it.
//
// It is sharded by identity hash; each shard is an RWMutex-guarded map over
// a CLOCK ring (second-chance eviction), so Get takes only a read lock and
// concurrent readers do not contend. All methods are safe for concurrent use
// and never block on anything but the shard locks. Capacity is global: a Put
// of a new key into a full cache evicts from the key's own shard, so Len
// never exceeds Capacity (except by one per shard in the corner case where
// the full cache has no entry at all in the new key's shard).
//
// Each shard links the entries of one owner member into a list, and the
// cache keeps, per owner member, the set of shards holding its entries, so
// InvalidateMember and InvalidateAbsent touch only the entries they drop
// (and the shards holding them), however large the cache.
//
// Events record every entry that leaves the cache other than by a Put that
// replaces it; they are advisory (for metrics and tests), so when
// EventCapacity undrained events are pending, further events are dropped
// and counted in DroppedEvents.
type PidCache struct {
	ttl      time.Duration
	capacity int64
	count    atomic.Int64 // entries in all shards
	shards   []cacheShard
	mask     uint64

	evMu      sync.Mutex
	events    []PidCacheEvent
	evCap     int
	evDropped atomic.Uint64
	evRounds  uint64 // rounds of evMu that recorded events, under evMu (tests)

	memMu   sync.Mutex // taken after a shard lock, never before one
	members map[string]*cachedMember
	markGen uint64 // counts the marks set (markShard on), under memMu

	invalVisits atomic.Uint64 // entries examined by InvalidateMember and InvalidateAbsent (tests)
	writeRounds atomic.Uint64 // shard write-lock rounds of RemoveWithReason and removeBatch (tests)
	indexFinds  atomic.Uint64 // entries removeBatch found through the index, not a hint (tests)
}

// cachedMember is an owner member with entries in the cache.
type cachedMember struct {
	ref    memberRef // parsed from the key; valid when parsed
	parsed bool      // the key has the form of Member.Key
	shards [4]uint64 // bit i: shard i holds entries of the member
	gen    uint64    // PidCache.markGen after its last mark
}

// memberEntries is the list of one member's entries within one shard,
// linked through cacheSlot.prev and next.
type memberEntries struct {
	head int32 // -1 when empty
	n    int32
}

type cacheSlot struct {
	id      Identity
	pid     *actor.PID
	member  string
	expires time.Time
	used    bool
	ref     atomic.Uint32  // CLOCK reference bit, set by Get under the read lock
	owner   *memberEntries // the list of member's entries in the shard, while used
	prev    int32          // neighbours in owner's list, -1 at the ends
	next    int32
}

type cacheShard struct {
	mu    sync.RWMutex
	index map[Identity]int32
	slots []cacheSlot // values, so a Get touches one slot; grown only under the write lock
	free  []int32
	hand  int
	num   int // position in PidCache.shards
	// members lists the entries of each owner member in this shard. A list
	// that empties stays (so that an owner whose entries come and go costs
	// no allocation) until the shard holds more empty lists than sweepEmpty
	// and than twice the non-empty ones, or its member is invalidated.
	members map[string]*memberEntries
	empty   int // lists in members with no entry
}

// sweepEmpty is the number of empty member lists a shard keeps at least.
const sweepEmpty = 64

// NewPidCache returns an empty cache, or the Validate error of cfg.
func NewPidCache(cfg PidCacheConfig) (*PidCache, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n := 1 // at most 256 shards: cachedMember.shards has 256 bits
	for n < 256 && cfg.Capacity/(n*2) >= 64 {
		n *= 2
	}
	c := &PidCache{
		ttl:      cfg.TTL,
		capacity: int64(cfg.Capacity),
		shards:   make([]cacheShard, n),
		mask:     uint64(n - 1),
		evCap:    cfg.EventCapacity,
		members:  make(map[string]*cachedMember),
	}
	for i := range c.shards {
		c.shards[i] = cacheShard{index: make(map[Identity]int32), num: i, members: make(map[string]*memberEntries)}
	}
	return c, nil
}

func (c *PidCache) shard(id Identity) *cacheShard {
	return &c.shards[identityHash(0, id)&c.mask]
}

// TTL returns the configured entry lifetime.
func (c *PidCache) TTL() time.Duration { return c.ttl }

// Get returns the PID cached for id if its entry has not expired at now.
// It takes a shard read lock only and does not allocate.
func (c *PidCache) Get(id Identity, now time.Time) (*actor.PID, bool) {
	s := c.shard(id)
	s.mu.RLock()
	i, ok := s.index[id]
	if !ok {
		s.mu.RUnlock()
		return nil, false
	}
	slot := &s.slots[i]
	if !now.Before(slot.expires) {
		s.mu.RUnlock()
		return nil, false
	}
	if slot.ref.Load() == 0 {
		slot.ref.Store(1)
	}
	pid := slot.pid
	s.mu.RUnlock()
	return pid, true
}

// Put caches pid for id, owned by the member whose key is member, valid
// until now+TTL. It replaces an existing entry of id silently; when the
// cache is full it evicts an entry of id's shard chosen by CLOCK (CacheExpired if that
// entry had expired at now, else CacheEvicted).
func (c *PidCache) Put(id Identity, pid *actor.PID, member string, now time.Time) {
	c.put(id, pid, member, now)
}

// cacheHint names the slot an entry was put in (shard<<32 | slot+1; 0:
// none), so that the identity lookup, which puts the PID of each record,
// can drop the entry later without hashing the identity or looking it up
// in the shard's index: removeBatch checks that the slot still holds the
// identity and looks it up only if not (the entry was evicted or put
// again elsewhere meanwhile).
type cacheHint uint64

func (h cacheHint) at() (shard uint64, slot int32) { return uint64(h) >> 32, int32(uint32(h)) - 1 }

// put is Put; it returns the entry's slot.
func (c *PidCache) put(id Identity, pid *actor.PID, member string, now time.Time) cacheHint {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	expires := now.Add(c.ttl)
	if i, ok := s.index[id]; ok {
		slot := &s.slots[i]
		if slot.member != member {
			c.unlink(s, i)
			c.link(s, i, member)
		}
		slot.pid, slot.member, slot.expires = pid, member, expires
		slot.ref.Store(1)
		return cacheHint(uint64(s.num)<<32 | uint64(i+1))
	}
	var i int32
	if c.count.Add(1) > c.capacity && len(s.index) > 0 {
		c.count.Add(-1)
		i = c.evict(s, now)
	} else if n := len(s.free); n > 0 {
		i = s.free[n-1]
		s.free = s.free[:n-1]
	} else {
		s.slots = append(s.slots, cacheSlot{})
		i = int32(len(s.slots) - 1)
	}
	c.link(s, i, member)
	slot := &s.slots[i]
	slot.id, slot.pid, slot.member, slot.expires, slot.used = id, pid, member, expires, true
	slot.ref.Store(0)
	s.index[id] = i
	return cacheHint(uint64(s.num)<<32 | uint64(i+1))
}

// link puts slot i of s at the head of member's list in s; the write lock
// is held and the slot is in no list. slot.member is not read.
func (c *PidCache) link(s *cacheShard, i int32, member string) {
	l := s.members[member]
	switch {
	case l == nil:
		l = &memberEntries{head: -1}
		s.members[member] = l
		c.markShard(member, s.num, true)
	case l.n == 0:
		s.empty--
	}
	slot := &s.slots[i]
	slot.owner, slot.prev, slot.next = l, -1, l.head
	if l.head >= 0 {
		s.slots[l.head].prev = i
	}
	l.head = i
	l.n++
}

// unlink takes slot i of s out of its member's list; the write lock is
// held and slot.member still names the member.
func (c *PidCache) unlink(s *cacheShard, i int32) {
	slot := &s.slots[i]
	l := slot.owner
	if slot.prev >= 0 {
		s.slots[slot.prev].next = slot.next
	} else {
		l.head = slot.next
	}
	if slot.next >= 0 {
		s.slots[slot.next].prev = slot.prev
	}
	slot.owner, slot.prev, slot.next = nil, -1, -1
	if l.n--; l.n == 0 {
		if s.empty++; s.empty > sweepEmpty && s.empty > 2*(len(s.members)-s.empty) {
			c.sweep(s)
		}
	}
}

// sweep forgets the empty member lists of s; the write lock is held.
func (c *PidCache) sweep(s *cacheShard) {
	for member, l := range s.members {
		if l.n == 0 {
			delete(s.members, member)
			c.markShard(member, s.num, false)
		}
	}
	s.empty = 0
}

// markShard records that shard num holds entries of member (on) or no
// longer does. Called with that shard's write lock held.
func (c *PidCache) markShard(member string, num int, on bool) {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	m := c.members[member]
	w, bit := num/64, uint64(1)<<(num%64)
	if on {
		if m == nil {
			m = &cachedMember{}
			m.ref, m.parsed = parseMemberKey(member)
			c.members[member] = m
		}
		m.shards[w] |= bit
		c.markGen++
		m.gen = c.markGen
		return
	}
	if m == nil {
		return
	}
	m.shards[w] &^= bit
	if m.shards == [4]uint64{} {
		delete(c.members, member)
	}
}

// parseMemberKey inverts Member.Key ("<ID>#<incarnation>" in decimal). A
// key of another form matches no member.
func parseMemberKey(key string) (memberRef, bool) {
	i := strings.LastIndexByte(key, '#')
	if i < 0 {
		return memberRef{}, false
	}
	digits := key[i+1:]
	if digits == "" || (len(digits) > 1 && digits[0] == '0') {
		return memberRef{}, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil {
		return memberRef{}, false
	}
	return memberRef{id: key[:i], incarnation: n}, true
}

// evict runs the CLOCK hand over the shard's slots until it finds an entry
// whose reference bit is clear (or that expired), drops it and returns its
// slot for reuse. Called with the write lock held and at least one entry in
// the shard, so it ends within two turns of the hand.
func (c *PidCache) evict(s *cacheShard, now time.Time) int32 {
	for {
		slot := &s.slots[s.hand]
		i := int32(s.hand)
		s.hand = (s.hand + 1) % len(s.slots)
		if !slot.used {
			continue
		}
		if slot.ref.Load() != 0 && now.Before(slot.expires) {
			slot.ref.Store(0)
			continue
		}
		reason := CacheEvicted
		if !now.Before(slot.expires) {
			reason = CacheExpired
		}
		c.emit(slot, reason)
		delete(s.index, slot.id)
		c.unlink(s, i)
		return i
	}
}

// remove drops slot i of s; called with the write lock held.
func (c *PidCache) remove(s *cacheShard, i int32, reason CacheDropReason) {
	c.emit(&s.slots[i], reason)
	c.drop(s, i)
	c.count.Add(-1)
}

// drop frees slot i of s without an event or a count update; the write
// lock is held.
func (c *PidCache) drop(s *cacheShard, i int32) {
	slot := &s.slots[i]
	delete(s.index, slot.id)
	c.unlink(s, i)
	slot.id, slot.pid, slot.member, slot.expires, slot.used = Identity{}, nil, "", time.Time{}, false
	slot.ref.Store(0)
	s.free = append(s.free, i)
}

// Remove drops the entry of id (reason CacheRemoved) and reports whether
// there was one.
func (c *PidCache) Remove(id Identity) bool { return c.RemoveWithReason(id, CacheRemoved) }

// RemoveWithReason drops the entry of id, recording reason in its event,
// and reports whether there was one.
func (c *PidCache) RemoveWithReason(id Identity, reason CacheDropReason) bool {
	s := c.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.writeRounds.Add(1)
	i, ok := s.index[id]
	if ok {
		c.remove(s, i, reason)
	}
	return ok
}

// removeBatch is a batch of identities whose entries PidCache.removeBatch
// drops, with the scratch it uses (invalidateAbsent gathers its events in
// it too); its buffers are kept for the next batch. It belongs to one
// goroutine (the identity lookup's).
type removeBatch struct {
	ids    []Identity
	hints  []cacheHint // where ids[i] was put, if known (else 0)
	next   []int32     // removeBatch's chains: 1 + the next position in the same shard; 0 ends
	events []PidCacheEvent
}

// add queues id, put at hint (0 if unknown).
func (b *removeBatch) add(id Identity, hint cacheHint) {
	b.ids = append(b.ids, id)
	b.hints = append(b.hints, hint)
}

// removeBatch drops the entries of b.ids, as RemoveWithReason would one by
// one, and empties b. A view change moves about records/members records,
// each in its own shard or nearly: one lock round per record (plus one
// for its event) was the largest cost of an update. Here the identities
// are chained by shard first (the shard known from the entry's hint, else
// hashed; a chain per shard rather than a sort, which cost as much as the
// rest), so that each shard touched is locked once for all of its
// entries; an entry whose slot the hint names is found without the
// index. The events are gathered in b and appended in one round at the
// end, in the order of the shards, then of b.ids. An entry Put for an
// identity after its shard's round stays, as if the Put came after the
// batch.
func (c *PidCache) removeBatch(b *removeBatch, reason CacheDropReason) {
	if len(b.ids) == 0 {
		return
	}
	var heads [256]int32 // per shard, 1 + the first position of its chain; 0: none
	next := slices.Grow(b.next[:0], len(b.ids))[:len(b.ids)]
	for i := len(b.ids) - 1; i >= 0; i-- { // from the end: chains in b.ids order
		var num uint64
		if i < len(b.hints) && b.hints[i] != 0 {
			num, _ = b.hints[i].at()
		} else {
			num = identityHash(0, b.ids[i]) & c.mask
		}
		next[i], heads[num] = heads[num], int32(i+1)
	}
	rounds, finds := uint64(0), uint64(0)
	for num, head := range heads[:len(c.shards)] {
		if head == 0 {
			continue
		}
		s := &c.shards[num]
		n := int64(0)
		s.mu.Lock()
		rounds++
		for at := head; at != 0; at = next[at-1] {
			pos := uint32(at - 1)
			i := b.hinted(s, pos)
			if i < 0 {
				var ok bool
				if i, ok = s.index[b.ids[pos]]; !ok {
					continue
				}
				finds++
			}
			slot := &s.slots[i]
			b.events = append(b.events, PidCacheEvent{Identity: slot.id, PID: slot.pid, Member: slot.member, Reason: reason})
			c.drop(s, i)
			n++
		}
		s.mu.Unlock()
		c.count.Add(-n)
	}
	c.writeRounds.Add(rounds) // once: the counters' line is cold
	c.indexFinds.Add(finds)
	c.emitAll(b.events)
	clear(b.ids)
	clear(b.events)
	b.ids, b.hints, b.next, b.events = b.ids[:0], b.hints[:0], next[:0], b.events[:0]
}

// hinted returns the slot of s that b.hints[pos] names if it holds
// b.ids[pos], else -1; the write lock of s is held.
func (b *removeBatch) hinted(s *cacheShard, pos uint32) int32 {
	if int(pos) >= len(b.hints) || b.hints[pos] == 0 {
		return -1
	}
	num, i := b.hints[pos].at()
	if num != uint64(s.num) || int(i) >= len(s.slots) {
		return -1
	}
	if slot := &s.slots[i]; slot.used && slot.id == b.ids[pos] {
		return i
	}
	return -1
}

// InvalidateMember drops every entry owned by the member with key
// memberKey (Member.Key) and returns how many it dropped (L3, V3.5). It
// touches only that member's entries.
func (c *PidCache) InvalidateMember(memberKey string) int {
	return c.invalidate(memberKey, CacheMemberLeft, nil)
}

// InvalidateAbsent drops every entry whose owner is not among present (by
// Member.Key) and returns how many it dropped (L3). It looks at each owner
// member with entries once and touches only the entries it drops.
func (c *PidCache) InvalidateAbsent(present []Member) int {
	sorted := present
	if !slices.IsSortedFunc(sorted, compareMembers) {
		sorted = slices.Clone(present)
		slices.SortFunc(sorted, compareMembers)
	}
	return c.invalidateAbsent(func(ref memberRef) bool { return containsRef(sorted, ref) }, nil)
}

// invalidateAbsent drops the entries of every owner member for which
// present is false (CacheMemberAbsent); present is called with memMu held.
// With a batch b (the identity lookup's), the events of all the shards
// touched are gathered in b and recorded in one round at the end, rather
// than in one round per shard.
func (c *PidCache) invalidateAbsent(present func(memberRef) bool, b *removeBatch) int {
	var gone []string
	c.memMu.Lock()
	for key, m := range c.members {
		if !m.parsed || !present(m.ref) {
			gone = append(gone, key)
		}
	}
	c.memMu.Unlock()
	n := 0
	for _, key := range gone {
		n += c.invalidate(key, CacheMemberAbsent, b)
	}
	if b != nil {
		c.emitAll(b.events)
		clear(b.events)
		b.events = b.events[:0]
	}
	return n
}

// containsRef reports whether members, sorted by compareMembers, hold the
// incarnation ref.
func containsRef(members []Member, ref memberRef) bool {
	_, ok := slices.BinarySearchFunc(members, ref, func(m Member, r memberRef) int {
		if c := strings.Compare(m.ID, r.id); c != 0 {
			return c
		}
		switch {
		case m.Incarnation < r.incarnation:
			return -1
		case m.Incarnation > r.incarnation:
			return 1
		}
		return 0
	})
	return ok
}

// invalidate drops the entries of member with reason. An entry Put for the
// member while it runs, into a shard it has already passed, stays (as if
// the Put came after it). With b, the events go to b.events.
func (c *PidCache) invalidate(member string, reason CacheDropReason, b *removeBatch) int {
	shards, gen := c.memberShards(member)
	n, emptied := c.dropMemberLists(member, shards, reason, b)
	c.unmarkShards(member, emptied, gen)
	return n
}

// memberShards returns the shards marked as holding entries of member and
// the mark generation they date from.
func (c *PidCache) memberShards(member string) (shards [4]uint64, gen uint64) {
	c.memMu.Lock()
	defer c.memMu.Unlock()
	if m := c.members[member]; m != nil {
		shards = m.shards
	}
	return shards, c.markGen
}

// dropMemberLists drops member's entries in each of shards, one shard lock
// at a time, and returns how many it dropped and the shards it left
// without a list of member. It leaves their marks to unmarkShards. With b,
// the events go to b.events.
func (c *PidCache) dropMemberLists(member string, shards [4]uint64, reason CacheDropReason, b *removeBatch) (n int, emptied [4]uint64) {
	for w, set := range shards {
		for set != 0 {
			bit := bits.TrailingZeros64(set)
			set &= set - 1
			s := &c.shards[w*64+bit]
			s.mu.Lock()
			if l := s.members[member]; l != nil {
				n += c.removeList(s, l, reason, b)
				delete(s.members, member)
				s.empty--
			}
			s.mu.Unlock()
			emptied[w] |= 1 << bit
		}
	}
	return n, emptied
}

// unmarkShards clears member's marks of the emptied shards. The marks are
// cleared in one memMu round rather than one per shard (with that shard's
// lock held), which is safe as long as no shard gained a list of member
// since the marks were read (generation gen): then every emptied shard is
// still without one. Otherwise (a Put for the member ran meanwhile) each
// emptied shard is checked under its lock, so that one refilled keeps its
// mark; InvalidateMember relies on the marks to find every entry.
func (c *PidCache) unmarkShards(member string, emptied [4]uint64, gen uint64) {
	if emptied == [4]uint64{} {
		return
	}
	c.memMu.Lock()
	m := c.members[member]
	if m == nil {
		c.memMu.Unlock()
		return
	}
	if m.gen <= gen {
		for w := range m.shards {
			m.shards[w] &^= emptied[w]
		}
		if m.shards == [4]uint64{} {
			delete(c.members, member)
		}
		c.memMu.Unlock()
		return
	}
	c.memMu.Unlock()
	for w, set := range emptied {
		for set != 0 {
			b := bits.TrailingZeros64(set)
			set &= set - 1
			s := &c.shards[w*64+b]
			s.mu.Lock()
			if s.members[member] == nil {
				c.markShard(member, s.num, false)
			}
			s.mu.Unlock()
		}
	}
}

// removeList drops every entry of the member list l of s, as remove does
// one by one, with one event batch and one count update; the write lock is
// held. It returns how many it dropped. With b, the events go to b.events
// (the caller records them), else to the cache's events.
func (c *PidCache) removeList(s *cacheShard, l *memberEntries, reason CacheDropReason, b *removeBatch) int {
	n := int(l.n)
	if b != nil {
		for i := l.head; i >= 0; i = s.slots[i].next {
			slot := &s.slots[i]
			b.events = append(b.events, PidCacheEvent{Identity: slot.id, PID: slot.pid, Member: slot.member, Reason: reason})
		}
	} else {
		c.evMu.Lock()
		c.evRounds++
		room := max(0, min(n, c.evCap-len(c.events)))
		if room < n {
			c.evDropped.Add(uint64(n - room))
		}
		for i := l.head; i >= 0; i = s.slots[i].next {
			if room == 0 {
				break
			}
			slot := &s.slots[i]
			c.events = append(c.events, PidCacheEvent{Identity: slot.id, PID: slot.pid, Member: slot.member, Reason: reason})
			room--
		}
		c.evMu.Unlock()
	}
	for i := l.head; i >= 0; {
		slot := &s.slots[i]
		next := slot.next
		delete(s.index, slot.id)
		slot.id, slot.pid, slot.member, slot.expires, slot.used = Identity{}, nil, "", time.Time{}, false
		slot.owner, slot.prev, slot.next = nil, -1, -1
		slot.ref.Store(0)
		s.free = append(s.free, i)
		i = next
	}
	l.head, l.n = -1, 0
	s.empty++ // the list is empty now; the caller forgets it
	c.count.Add(int64(-n))
	c.invalVisits.Add(uint64(n))
	return n
}

// PurgeExpired drops every entry expired at now (reason CacheExpired) and
// returns how many it dropped.
func (c *PidCache) PurgeExpired(now time.Time) int {
	n := 0
	for si := range c.shards {
		s := &c.shards[si]
		s.mu.Lock()
		for _, i := range s.index {
			if !now.Before(s.slots[i].expires) {
				c.remove(s, i, CacheExpired)
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// Len returns the number of entries, expired or not.
func (c *PidCache) Len() int {
	n := 0
	for si := range c.shards {
		s := &c.shards[si]
		s.mu.RLock()
		n += len(s.index)
		s.mu.RUnlock()
	}
	return n
}

func (c *PidCache) emit(slot *cacheSlot, reason CacheDropReason) {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	c.evRounds++
	if len(c.events) >= c.evCap {
		c.evDropped.Add(1)
		return
	}
	c.events = append(c.events, PidCacheEvent{Identity: slot.id, PID: slot.pid, Member: slot.member, Reason: reason})
}

// emitAll records evs in one round, as emit does one by one.
func (c *PidCache) emitAll(evs []PidCacheEvent) {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	c.evRounds++
	room := max(0, min(len(evs), c.evCap-len(c.events)))
	c.events = append(c.events, evs[:room]...)
	if room < len(evs) {
		c.evDropped.Add(uint64(len(evs) - room))
	}
}

// reserveEvents makes room for n more events (within EventCapacity), so
// that a batch of drops does not copy the events as they grow.
func (c *PidCache) reserveEvents(n int) {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	c.events = slices.Grow(c.events, min(n, c.evCap-len(c.events)))
}

// DrainEvents returns the pending events in the order they happened and
// forgets them.
func (c *PidCache) DrainEvents() []PidCacheEvent {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	out := c.events
	c.events = nil
	return out
}

// reuseEvents takes es, drained from the cache, as the buffer of the next
// events when none are pending and es is larger than the current one.
func (c *PidCache) reuseEvents(es []PidCacheEvent) {
	c.evMu.Lock()
	defer c.evMu.Unlock()
	if len(c.events) == 0 && cap(es) > cap(c.events) {
		clear(es)
		c.events = es[:0]
	}
}

// DroppedEvents returns how many events were dropped because EventCapacity
// undrained events were pending.
func (c *PidCache) DroppedEvents() uint64 { return c.evDropped.Load() }
