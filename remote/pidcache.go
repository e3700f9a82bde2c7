package remote

import (
	"hash/maphash"
	"sync/atomic"

	"github.com/fraktor-go/fraktor/actor"
)

// pidCacheSlots is the size of the inbound caches (a power of two).
const pidCacheSlots = 1024

// pidCache keeps the PID values of senders on other nodes, so that a
// stream of envelopes from the same actor does not allocate a PID per
// envelope (such a PID is bound to proc, the remote process for PIDs peers
// named, which never goes stale). It is direct-mapped and lock-free: a slot
// holds the last PID whose ID hashed there; a collision replaces it.
type pidCache struct {
	seed  maphash.Seed
	proc  actor.Process
	slots [pidCacheSlots]atomic.Pointer[actor.PID]
}

func (c *pidCache) init(proc actor.Process) { c.seed, c.proc = maphash.MakeSeed(), proc }

// get returns a PID for ref, cached or new (and then cached).
func (c *pidCache) get(ref PIDRef) *actor.PID {
	s := &c.slots[maphash.String(c.seed, ref.ID)&(pidCacheSlots-1)]
	if p := s.Load(); p != nil && p.ID == ref.ID && p.Address == ref.Address {
		return p
	}
	p := actor.NewBoundPID(ref.Address, ref.ID, c.proc)
	s.Store(p)
	return p
}

// target is a local process that inbound envelopes named, with the PID
// they name it by.
type target struct {
	pid  *actor.PID
	proc actor.Process
}

// targetCache resolves the local targets of inbound envelopes: the
// registry lookup and the PID are made once per target, not per envelope.
// An entry whose process has stopped is looked up again, so a name that now
// belongs to a new actor reaches the new one. Direct-mapped and lock-free
// like pidCache.
type targetCache struct {
	seed  maphash.Seed
	slots [pidCacheSlots]atomic.Pointer[target]
}

func (c *targetCache) init() { c.seed = maphash.MakeSeed() }

// get returns the live local process named ref (whose address is this
// node's), or false when there is none.
//
// A future is not cached: it takes one answer, and a cached one stayed
// reachable from its slot, with that answer, until another target hashed
// there, long after its caller dropped it
// (TestNewuser10AnsweredFutureNotKeptByInboundCache). A slot whose process
// stopped and whose name names nothing now is emptied for the same reason.
func (c *targetCache) get(sys actor.Host, ref PIDRef) (*target, bool) {
	s := &c.slots[maphash.String(c.seed, ref.ID)&(pidCacheSlots-1)]
	old := s.Load()
	if old != nil && old.pid.ID == ref.ID && old.pid.Address == ref.Address {
		if !sys.ProcessStopped(old.proc) {
			return old, true
		}
	} else {
		old = nil // another target's slot: left as it is
	}
	p, ok := sys.Lookup(ref.ID)
	if !ok {
		if old != nil {
			s.CompareAndSwap(old, nil)
		}
		return nil, false
	}
	t := &target{pid: actor.NewPID(ref.Address, ref.ID), proc: p}
	if _, future := p.(*actor.Future); future {
		if old != nil {
			s.CompareAndSwap(old, nil)
		}
		return t, true
	}
	s.Store(t)
	return t, true
}
