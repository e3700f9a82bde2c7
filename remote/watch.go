package remote

import (
	"sync"

	"github.com/fraktor-go/fraktor/actor"
)

// watchKey names one watch by the wire references of both ends (addresses
// normalized: never actor.LocalAddress).
type watchKey struct{ watcher, watchee PIDRef }

// watchEntry keeps the PIDs of one watch as the runtime handed them over, so
// that a Terminated for it carries the very PID the watcher watched.
type watchEntry struct{ watcher, watchee *actor.PID }

// watchTable is the remote watch bookkeeping, by peer address:
//
//   - out: local watchers of processes on a peer. When the peer is reported
//     terminated (give-up, goodbye, restart, blocked), each watcher gets
//     Terminated{AddressTerminated}: nobody else will tell it. A peer's
//     TerminatedNotice is taken only for a watch held here, once.
//   - in: watchers on a peer of local processes (inWatch). When the peer is
//     gone, the local processes are told to forget those watchers, so that
//     nothing is kept, or sent, for a node that no longer exists.
//
// Entries leave when the watch ends normally (Unwatch, Terminated).
//
// The inbound watches of one address are bounded (maxIn,
// Config.MaxWatchesPerPeer): what a peer's WatchRequests can make this
// node hold. The count is that of the address's watches held, so every
// end of one frees a place exactly. An inbound entry whose watch has ended
// but whose update still waits in the process's queue stays until the
// process takes it (lingering); a new pair is refused while held and
// lingering entries number 2*maxIn, so an address's entries, and the
// updates they have queued, are at most 2*maxIn.
type watchTable struct {
	mu  sync.Mutex
	out map[string]map[watchKey]watchEntry // by the watchee's address
	in  map[string]*inPeer                 // by the watcher's address

	maxIn int
	// refusing holds the addresses at the bound whose refusal has been
	// logged; one leaves when its held and its lingering entries fall to
	// half the bound (calm) or its watches are taken, so that a peer at
	// the bound is logged once per episode.
	refusing map[string]struct{}
}

// inPeer is the inbound watches of one peer address.
type inPeer struct {
	watches map[watchKey]*inWatch
	held    int // entries whose want is set: the watches held
}

// inWatch is one (remote watcher, local watchee) pair: the watch the peer
// asked for last (want), and whether an update of it waits in the
// watchee's system queue (queued; internal/watchhook), which reads want
// when the process handles it. A peer's requests for the pair change
// want, and queue an update only when none is queued and the process
// does not have that state already (has): any number of WatchRequests and
// UnwatchRequests hold one queued system message at most, for an actor
// stuck in its Receive as for any other. All fields but key and entry are
// guarded by the table's lock.
type inWatch struct {
	t      *watchTable
	key    watchKey
	entry  watchEntry
	want   bool
	queued bool
	has    bool
}

// Take implements watchhook.State: the process takes the latest state. An
// entry that is not wanted leaves the table (unless a new one for the pair
// replaced it already).
func (s *inWatch) Take() bool {
	t := s.t
	t.mu.Lock()
	defer t.mu.Unlock()
	s.queued = false
	s.has = s.want
	if !s.want {
		t.dropIn(s)
	}
	return s.want
}

// dropIn takes s out of the table, if it is still there. Lock held.
func (w *watchTable) dropIn(s *inWatch) {
	addr := s.key.watcher.Address
	p := w.in[addr]
	if p == nil || p.watches[s.key] != s {
		return
	}
	delete(p.watches, s.key)
	if s.want {
		s.want = false
		p.held--
	}
	if len(p.watches) == 0 {
		delete(w.in, addr)
	}
	w.calm(addr, p)
}

// calm ends addr's episode at the bound (refusing) once its held and its
// lingering entries have both fallen to half the bound. Lock held.
func (w *watchTable) calm(addr string, p *inPeer) {
	if p.held <= w.maxIn/2 && len(p.watches)-p.held <= w.maxIn/2 {
		delete(w.refusing, addr)
	}
}

func (w *watchTable) init(maxIn int) {
	w.out = map[string]map[watchKey]watchEntry{}
	w.in = map[string]*inPeer{}
	w.maxIn = maxIn
	w.refusing = map[string]struct{}{}
}

func addWatch(m map[string]map[watchKey]watchEntry, addr string, k watchKey, e watchEntry) {
	byKey := m[addr]
	if byKey == nil {
		byKey = map[watchKey]watchEntry{}
		m[addr] = byKey
	}
	if _, ok := byKey[k]; !ok {
		byKey[k] = e
	}
}

func takeWatch(m map[string]map[watchKey]watchEntry, addr string, k watchKey) (watchEntry, bool) {
	byKey := m[addr]
	e, ok := byKey[k]
	if ok {
		delete(byKey, k)
		if len(byKey) == 0 {
			delete(m, addr)
		}
	}
	return e, ok
}

// addOutbound records that local watcher watches remote watchee.
func (w *watchTable) addOutbound(r *Remote, watchee, watcher *actor.PID) {
	k := watchKey{watcher: r.ref(watcher), watchee: r.ref(watchee)}
	w.mu.Lock()
	addWatch(w.out, k.watchee.Address, k, watchEntry{watcher: watcher, watchee: watchee})
	w.mu.Unlock()
}

func (w *watchTable) removeOutbound(r *Remote, watchee, watcher *actor.PID) {
	w.takeOutbound(watchKey{watcher: r.ref(watcher), watchee: r.ref(watchee)})
}

// takeOutbound removes and returns the outbound watch k (normalized).
func (w *watchTable) takeOutbound(k watchKey) (watchEntry, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return takeWatch(w.out, k.watchee.Address, k)
}

// watchInbound records that remote watcher wants to watch local watchee
// (a WatchRequest), unless the watcher's address already holds maxIn
// watches and this one is new, or, for a new pair, the address's entries
// (held, and lingering: ended, their update not yet taken by the process)
// number 2*maxIn: then it reports false,
// and first tells whether this refusal starts an episode at the bound (to
// be logged). post is the entry whose update the caller must hand the
// process (watchhook.Post), nil when none is due: the watch was held
// already, or an update is queued, which will read the new state.
func (w *watchTable) watchInbound(k watchKey, e watchEntry) (post *inWatch, ok, first bool) {
	addr := k.watcher.Address
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.in[addr]
	var s *inWatch
	held, lingering := 0, 0
	if p != nil {
		s = p.watches[k]
		held, lingering = p.held, len(p.watches)-p.held
	}
	if s != nil && s.want {
		return nil, true, false
	}
	// A new pair also needs room among all the entries, lingering ones
	// included: held+lingering < 2*maxIn, written without overflow.
	if held >= w.maxIn || s == nil && lingering-w.maxIn >= w.maxIn-held {
		_, logged := w.refusing[addr]
		w.refusing[addr] = struct{}{}
		return nil, false, !logged
	}
	if p == nil {
		p = &inPeer{watches: map[watchKey]*inWatch{}}
		w.in[addr] = p
	}
	if s == nil {
		s = &inWatch{t: w, key: k, entry: e}
		p.watches[k] = s
	}
	s.want = true
	p.held++
	if s.queued || s.has {
		return nil, true, false
	}
	s.queued = true
	return s, true, false
}

// unwatchInbound records that remote watcher no longer wants to watch
// local watchee (an UnwatchRequest), and returns the entry whose update
// the caller must hand the process, or nil: not watched (never, refused,
// or unwatched already), or an update is queued.
func (w *watchTable) unwatchInbound(k watchKey) *inWatch {
	addr := k.watcher.Address
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.in[addr]
	if p == nil {
		return nil
	}
	s := p.watches[k]
	if s == nil || !s.want {
		return nil
	}
	s.want = false
	p.held--
	w.calm(addr, p)
	if s.queued {
		return nil
	}
	if !s.has {
		w.dropIn(s)
		return nil
	}
	s.queued = true
	return s
}

// endInbound ends the inbound watch k because its watchee has ended (its
// Terminated is going out to the watcher) and reports whether the watcher
// is to be told: whether the peer still wants the watch. The entry leaves,
// so that a second Terminated for it (an update drained at the stop, then
// the watcher list) tells nothing.
func (w *watchTable) endInbound(k watchKey) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.in[k.watcher.Address]
	if p == nil {
		return false
	}
	s := p.watches[k]
	if s == nil {
		return false
	}
	want := s.want
	w.dropIn(s)
	return want
}

// takeAddress removes and returns every outbound watch whose watchee is at
// addr, ends every inbound one whose watcher is (held: how many were), and
// returns the inbound entries whose process has the watcher and no update
// queued: the caller hands each process its update (which reads "not
// watched"). Entries whose update is queued stay until their process takes
// it (Take), which then removes the watcher.
func (w *watchTable) takeAddress(addr string) (out []watchEntry, held int, post []*inWatch) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.out[addr] {
		out = append(out, e)
	}
	delete(w.out, addr)
	delete(w.refusing, addr)
	p := w.in[addr]
	if p == nil {
		return out, 0, nil
	}
	held = p.held
	for k, s := range p.watches {
		s.want = false
		switch {
		case s.queued:
		case s.has:
			s.queued = true
			post = append(post, s)
		default:
			delete(p.watches, k)
		}
	}
	p.held = 0
	if len(p.watches) == 0 {
		delete(w.in, addr)
	}
	return out, held, post
}

// watchedFrom reports whether watchers at addr watch local processes.
func (w *watchTable) watchedFrom(addr string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.in[addr]
	return p != nil && p.held > 0
}

// counts returns the number of outbound and inbound watches held (for
// tests and diagnostics).
func (w *watchTable) counts() (out, in int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.out {
		out += len(m)
	}
	for _, p := range w.in {
		in += p.held
	}
	return out, in
}

// WatchCounts returns how many remote watches this node holds: local
// watchers of processes on other nodes (out) and watchers on other nodes of
// local processes (in). For diagnostics and tests.
func (r *Remote) WatchCounts() (out, in int) { return r.watches.counts() }
