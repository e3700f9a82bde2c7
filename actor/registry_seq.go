package actor

import (
	"sync"
	"sync/atomic"
)

// Most actors have a generated ID ("<prefix>$<seq>", "#<parent>/<prefix>$<seq>"
// in base 36, seq from System.idSeq), and most of them live briefly. A map
// keyed by the ID string pays a hash, an insert and a delete per life, and
// a map that sees a million inserts and deletes probes through tombstones
// (SkyNet spent a third of its time there). Instead the sequence number
// picks a slot in a page of seqPageSize slots: registering and removing are
// an atomic store, and a page is found through a small map keyed by page
// number (one insert and one delete per seqPageSize lives) behind a
// direct-mapped cache of the seqRecent newest pages, which serves without a
// lock the spawns and most stops (an actor that stops before another
// seqRecent*seqPageSize spawns). An idle actor costs its slot, 8 bytes,
// instead of a map entry. TestRegistrySeqTable pins it.
//
// The cache covers a million numbers (seqRecent pages of seqPageSize): a
// burst of short-lived actors runs through the ready queue in spawn order,
// so an actor stops about as many spawns after its own as the burst is
// large. With 1,024 pages (131,072 numbers) most of SkyNet's million
// leaves missed the cache on their stop and took the shard's read lock
// and map, which both workers share: SkyNet used about 5 % more CPU.
// TestSeqTableCacheCoversBurst pins the reach.
//
// Numbers start after a base (System.idSeq's start, random unless
// SystemConfig.DeterministicIDs): the first page counts the numbers below
// the first one as finished with, or it would wait for them forever and
// never leave. TestSeqTableRandomBaseFirstPageLeaves pins it.
//
// A slot holds the actor whose generated ID carries its number; any lookup
// compares the whole ID, so an ID that merely ends like a generated one (a
// name "x$5", a future's "future$5") never resolves to the actor in slot 5
// and falls through to the map of named IDs.

const (
	seqPageBits = 7
	seqPageSize = 1 << seqPageBits
	seqShards   = 16
	seqRecent   = 8192 // pages in the cache: 64 KB per system
)

// seqPage holds the actors whose sequence numbers share num (seq >>
// seqPageBits).
type seqPage struct {
	num uint64
	// done counts the page's numbers that are finished with: their actor
	// was removed, or it was never registered. The page leaves the
	// directory when all are. Beside num, so a stop touches one header line.
	done  atomic.Int32
	slots [seqPageSize]atomic.Pointer[cell]
}

type seqShard struct {
	mu sync.RWMutex
	m  map[uint64]*seqPage
	_  [24]byte
}

// seqTable is the registry of generated IDs.
type seqTable struct {
	recent [seqRecent]atomic.Pointer[seqPage] // page n at n%seqRecent, if no newer one took the place
	shards [seqShards]seqShard
	base   uint64 // the numbers handed out start at base+1; set by init
}

func (t *seqTable) init(base uint64) {
	t.base = base
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]*seqPage)
	}
}

// page returns the page of number n, creating it when create is set (only
// for a number not yet finished with, so a page that left is never
// recreated); nil when it does not exist.
func (t *seqTable) page(n uint64, create bool) *seqPage {
	if p := t.recent[n%seqRecent].Load(); p != nil && p.num == n {
		return p
	}
	sh := &t.shards[n%seqShards]
	sh.mu.RLock()
	p := sh.m[n]
	sh.mu.RUnlock()
	if p != nil || !create {
		return p
	}
	sh.mu.Lock()
	if p = sh.m[n]; p == nil {
		p = &seqPage{num: n}
		if n == t.base>>seqPageBits {
			// Numbers up to the base are never handed out.
			p.done.Store(int32(t.base&(seqPageSize-1)) + 1)
		}
		sh.m[n] = p
	}
	sh.mu.Unlock()
	r := &t.recent[n%seqRecent]
	for {
		c := r.Load()
		if c != nil && c.num >= n || r.CompareAndSwap(c, p) {
			return p
		}
	}
}

// store registers c under seq, which nobody else holds.
func (t *seqTable) store(seq uint64, c *cell) {
	t.page(seq>>seqPageBits, true).slots[seq&(seqPageSize-1)].Store(c)
}

// load returns the actor registered under seq, or nil.
func (t *seqTable) load(seq uint64) *cell {
	if p := t.page(seq>>seqPageBits, false); p != nil {
		return p.slots[seq&(seqPageSize-1)].Load()
	}
	return nil
}

// finish empties seq's slot and counts seq as finished with; called once
// per handed-out number, whether or not it was stored.
func (t *seqTable) finish(seq uint64) {
	t.finishIn(t.page(seq>>seqPageBits, true), seq)
}

// remove finishes seq if c holds its slot, with one page lookup (a stop
// of an old actor misses the caches on it); false otherwise.
func (t *seqTable) remove(seq uint64, c *cell) bool {
	p := t.page(seq>>seqPageBits, false)
	if p == nil || p.slots[seq&(seqPageSize-1)].Load() != c {
		return false
	}
	t.finishIn(p, seq)
	return true
}

func (t *seqTable) finishIn(p *seqPage, seq uint64) {
	p.slots[seq&(seqPageSize-1)].Store(nil)
	if p.done.Add(1) != seqPageSize {
		return
	}
	sh := &t.shards[p.num%seqShards]
	sh.mu.Lock()
	if sh.m[p.num] == p {
		delete(sh.m, p.num)
	}
	sh.mu.Unlock()
	t.recent[p.num%seqRecent].CompareAndSwap(p, nil)
}

// each calls f for every registered actor.
func (t *seqTable) each(f func(*cell)) {
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		pages := make([]*seqPage, 0, len(sh.m))
		for _, p := range sh.m {
			pages = append(pages, p)
		}
		sh.mu.RUnlock()
		for _, p := range pages {
			for j := range p.slots {
				if c := p.slots[j].Load(); c != nil {
					f(c)
				}
			}
		}
	}
}

// seqOf returns the sequence number of an ID of the generated form: it
// ends with '$' and a base-36 number without leading zeros (what
// strconv.AppendUint writes). ok is false for any other ID.
func seqOf(id string) (seq uint64, ok bool) {
	i := len(id) - 1
	for i >= 0 && id[i] != '$' {
		i--
	}
	digits := id[i+1:]
	if i < 0 || len(digits) == 0 || len(digits) > 13 || digits[0] == '0' {
		return 0, false
	}
	for j := 0; j < len(digits); j++ {
		ch := digits[j]
		var d uint64
		switch {
		case '0' <= ch && ch <= '9':
			d = uint64(ch - '0')
		case 'a' <= ch && ch <= 'z':
			d = uint64(ch-'a') + 10
		default:
			return 0, false
		}
		if seq > (1<<64-1-d)/36 {
			return 0, false // overflows: no sequence number reads so
		}
		seq = seq*36 + d
	}
	return seq, true
}
