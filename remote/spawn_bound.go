package remote

import (
	"sync"

	"github.com/fraktor-go/fraktor/actor"
)

// spawnedByPeers counts, per peer address, the live actors that peers
// spawned here by remote spawn, and bounds them (Config.MaxSpawnsPerPeer).
// Before the bound, a bare connection could spawn actors of the offered
// kinds without end: 200 000 SpawnRequests held 200 000 actors and some
// 84 MiB of heap (TestSpawnsPerPeerBounded).
//
// It is also the Process that learns of those actors' ends: each one it
// tracks is watched by a PID bound to it (never registered, so no peer can
// address it), and the Terminated that the runtime sends once per Watch
// (Stopped, or NotFound when the actor was gone before the Watch reached
// it) frees the place. The count is exact: a place is reserved before the
// spawn, handed back when the spawn fails, and given up once, when the
// actor's Terminated comes.
type spawnedByPeers struct {
	max int
	pid *actor.PID // the watcher of every tracked actor: bound to this

	mu     sync.Mutex
	byAddr map[string]int
	// actors maps a tracked actor's ID to the address of the peer that
	// spawned it. A name is free again as its actor stops, a moment
	// before that actor's Terminated comes: an ID spawned again meanwhile
	// queues its address in later (oldest first; the Terminated that
	// comes is the older actor's).
	actors map[string]string
	later  map[string][]string
}

func (s *spawnedByPeers) init(max int, address string) {
	s.max = max
	s.byAddr = map[string]int{}
	s.actors = map[string]string{}
	s.later = map[string][]string{}
	s.pid = actor.NewBoundPID(address, "$remote-spawned", s)
}

// reserve takes a place for a spawn by the peer at addr, or reports that
// its actors fill the bound.
func (s *spawnedByPeers) reserve(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.byAddr[addr] >= s.max {
		return false
	}
	s.byAddr[addr]++
	return true
}

// release gives back a place of addr (a spawn that failed, an actor that
// ended).
func (s *spawnedByPeers) release(addr string) {
	s.mu.Lock()
	s.releaseLocked(addr)
	s.mu.Unlock()
}

func (s *spawnedByPeers) releaseLocked(addr string) {
	if n := s.byAddr[addr]; n > 1 {
		s.byAddr[addr] = n - 1
	} else {
		delete(s.byAddr, addr)
	}
}

// track records pid, spawned by the peer at addr on a place reserve gave,
// and watches it: its Terminated frees the place.
func (s *spawnedByPeers) track(sys *actor.System, pid *actor.PID, addr string) {
	s.mu.Lock()
	if _, ok := s.actors[pid.ID]; ok {
		s.later[pid.ID] = append(s.later[pid.ID], addr)
	} else {
		s.actors[pid.ID] = addr
	}
	s.mu.Unlock()
	// After the record: the Terminated may come at once.
	sys.SendSystem(pid, &actor.Watch{Watcher: s.pid})
}

// count returns the live actors that the peer at addr spawned here.
func (s *spawnedByPeers) count(addr string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.byAddr[addr]
}

// SendSystem implements actor.Process: a tracked actor ended.
func (s *spawnedByPeers) SendSystem(_ *actor.PID, m actor.SystemMessage) {
	t, ok := m.(*actor.TerminatedSystem)
	if !ok || t.Who == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := t.Who.ID
	addr, ok := s.actors[id]
	if !ok {
		return
	}
	if next := s.later[id]; len(next) > 0 {
		s.actors[id] = next[0]
		if len(next) == 1 {
			delete(s.later, id)
		} else {
			s.later[id] = next[1:]
		}
	} else {
		delete(s.actors, id)
	}
	s.releaseLocked(addr)
}

// SendUser implements actor.Process; the watcher takes no user messages.
func (*spawnedByPeers) SendUser(*actor.PID, any, *actor.PID) {}

// StopProcess implements actor.Process.
func (*spawnedByPeers) StopProcess(*actor.PID) {}
