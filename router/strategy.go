package router

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/fraktor-go/fraktor/actor"
)

// Strategy decides which routees get a message. Use the constructors:
// RoundRobin, Random, RandomSeeded, Broadcast, ConsistentHash and
// ScatterGatherFirstCompleted. A Strategy is a description: each router
// makes its own state from it (a round-robin counter), so one Strategy may
// serve many routers.
type Strategy interface {
	newRouting() routing
}

// routing is a router's live strategy. route runs on the sender's
// goroutine, concurrently with other senders: it reads the routee snapshot
// it is given and takes no lock.
type routing interface {
	route(r *router, set *routeeSet, msg any, sender *actor.PID)
}

// routeeSet is an immutable snapshot of the routees. The router's actor
// builds a new one for every change and publishes it with one atomic store.
type routeeSet struct {
	pids []*actor.PID
	// keys holds xxhash(pid.Key()) per routee: the routee's side of the
	// rendezvous score, computed once per change instead of per message.
	keys []uint64
}

func newRouteeSet(pids []*actor.PID) *routeeSet {
	s := &routeeSet{pids: pids, keys: make([]uint64, len(pids))}
	for i, p := range pids {
		s.keys[i] = xxhash.Sum64String(p.Key())
	}
	return s
}

// RoundRobin routes each message to the next routee in turn (one atomic
// counter per router).
func RoundRobin() Strategy { return roundRobinStrategy{} }

type roundRobinStrategy struct{}

func (roundRobinStrategy) newRouting() routing { return &roundRobin{} }

type roundRobin struct{ next atomic.Uint64 }

func (rr *roundRobin) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	n := uint64(len(set.pids))
	if n == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	r.deliver(set.pids[(rr.next.Add(1)-1)%n], msg, sender)
}

// Random routes each message to a routee picked uniformly at random
// (math/rand/v2's per-thread generator: no lock, no allocation).
func Random() Strategy { return randomStrategy{} }

type randomStrategy struct{}

func (randomStrategy) newRouting() routing { return randomRouting{} }

type randomRouting struct{}

func (randomRouting) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	if len(set.pids) == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	r.deliver(set.pids[rand.IntN(len(set.pids))], msg, sender)
}

// RandomSeeded routes each message to a routee picked by a generator
// seeded with seed, one per router: routers made from it pick the same
// sequence of positions in their routee lists, so a test on a deterministic
// system (testkit.NewManualSystem) routes alike run after run. The
// generator is shared by the router's senders under a mutex; Random takes
// no lock.
func RandomSeeded(seed uint64) Strategy { return seededStrategy{seed: seed} }

type seededStrategy struct{ seed uint64 }

func (s seededStrategy) newRouting() routing {
	return &seededRouting{rnd: rand.New(rand.NewPCG(s.seed, s.seed^0x9e3779b97f4a7c15))}
}

type seededRouting struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

func (s *seededRouting) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	if len(set.pids) == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	s.mu.Lock()
	i := s.rnd.IntN(len(set.pids))
	s.mu.Unlock()
	r.deliver(set.pids[i], msg, sender)
}

// Broadcast routes every message to every routee.
func Broadcast() Strategy { return broadcastStrategy{} }

type broadcastStrategy struct{}

func (broadcastStrategy) newRouting() routing { return broadcastRouting{} }

type broadcastRouting struct{}

func (broadcastRouting) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	r.broadcast(set, msg, sender)
}

// ConsistentHash routes a message by its key (Hashable or HashableBytes):
// the same key goes to the same routee while the routees stay the same.
// The routee is chosen by rendezvous hashing: each routee scores the key's
// xxhash mixed with the routee's own, and the highest score wins. Adding a
// routee therefore moves only the keys the new routee wins, about 1/n of
// them, all to it; removing one moves only the keys it had. A message
// without a key is a dead letter (ErrNoHashKey). The cost is one xxhash of
// the key and one multiply-xorshift per routee.
func ConsistentHash() Strategy { return consistentHashStrategy{} }

type consistentHashStrategy struct{}

func (consistentHashStrategy) newRouting() routing { return consistentHash{} }

type consistentHash struct{}

func (consistentHash) route(r *router, set *routeeSet, msg any, sender *actor.PID) {
	var h uint64
	switch m := carried(msg).(type) {
	case Hashable:
		h = hashKey(m.HashKey())
	case HashableBytes:
		h = xxhash.Sum64(m.HashKeyBytes())
	default:
		r.refuse(msg, sender, reasonNoHashKey)
		return
	}
	if len(set.pids) == 0 {
		r.refuse(msg, sender, reasonNoRoutees)
		return
	}
	r.deliver(set.pids[rendezvous(set.keys, h)], msg, sender)
}

func hashKey(k string) uint64 { return xxhash.Sum64String(k) }

// rendezvous returns the index of the routee with the highest score for
// the key hash h.
func rendezvous(keys []uint64, h uint64) int {
	best, bestScore := 0, uint64(0)
	for i, k := range keys {
		if s := mix64(h ^ k); i == 0 || s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// mix64 is the splitmix64 finalizer: a bijection that spreads every input
// bit over the output, so scores of different routees are independent.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// ScatterGatherFirstCompleted sends each message to every routee and
// passes the first answer to the sender (with the answering routee as its
// sender); later answers are dropped. When no answer comes within timeout,
// a waiting future fails with an error wrapping actor.ErrTimeout (an actor
// sender hears nothing; the miss is a dead letter). A message without a
// sender is only broadcast. Each request registers a collector under its
// own ID (so routees on other nodes can answer it) and arms one timer on
// the system's clock; both end with the first answer, the timeout or the
// router's stop.
func ScatterGatherFirstCompleted(timeout time.Duration) Strategy {
	return scatterGatherStrategy{timeout: timeout}
}

type scatterGatherStrategy struct{ timeout time.Duration }

func (s scatterGatherStrategy) newRouting() routing { return &scatterGather{timeout: s.timeout} }
