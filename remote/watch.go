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
//     Terminated{AddressTerminated}: nobody else will tell it.
//   - in: watchers on a peer of local processes. When the peer is gone, the
//     local processes are told to forget those watchers (Unwatch), so that
//     nothing is kept, or sent, for a node that no longer exists.
//
// Entries leave when the watch ends normally (Unwatch, Terminated).
//
// The inbound watches of one address are bounded (maxIn,
// Config.MaxWatchesPerPeer): what a peer's WatchRequests can make this
// node hold. The count is the size of the address's map, so every removal
// frees a place exactly.
type watchTable struct {
	mu  sync.Mutex
	out map[string]map[watchKey]watchEntry // by the watchee's address
	in  map[string]map[watchKey]watchEntry // by the watcher's address

	maxIn int
	// refusing holds the addresses at maxIn whose refusal has been
	// logged; one leaves when its watches fall to half the bound or are
	// taken, so that a peer at the bound is logged once per episode.
	refusing map[string]struct{}
}

func (w *watchTable) init(maxIn int) {
	w.out = map[string]map[watchKey]watchEntry{}
	w.in = map[string]map[watchKey]watchEntry{}
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

// addInbound records that remote watcher watches local watchee, unless
// the watcher's address already holds maxIn watches and this one is new:
// then it reports false, and first tells whether this refusal starts an
// episode at the bound (to be logged).
func (w *watchTable) addInbound(k watchKey, e watchEntry) (ok, first, held bool) {
	addr := k.watcher.Address
	w.mu.Lock()
	defer w.mu.Unlock()
	byKey := w.in[addr]
	_, held = byKey[k]
	if !held && len(byKey) >= w.maxIn {
		_, logged := w.refusing[addr]
		w.refusing[addr] = struct{}{}
		return false, !logged, false
	}
	addWatch(w.in, addr, k, e)
	return true, false, held
}

// removeInbound forgets that remote watcher watches local watchee.
func (w *watchTable) removeInbound(r *Remote, watcher, watchee *actor.PID) {
	w.removeInboundKey(watchKey{watcher: r.ref(watcher), watchee: r.ref(watchee)})
}

// removeInboundKey forgets the inbound watch k and reports whether it was
// held.
func (w *watchTable) removeInboundKey(k watchKey) bool {
	addr := k.watcher.Address
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := takeWatch(w.in, addr, k)
	if ok && len(w.in[addr]) <= w.maxIn/2 {
		delete(w.refusing, addr)
	}
	return ok
}

// takeAddress removes and returns every watch whose remote end is at addr.
func (w *watchTable) takeAddress(addr string) (out, in []watchEntry) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, e := range w.out[addr] {
		out = append(out, e)
	}
	for _, e := range w.in[addr] {
		in = append(in, e)
	}
	delete(w.out, addr)
	delete(w.in, addr)
	delete(w.refusing, addr)
	return out, in
}

// watchedFrom reports whether watchers at addr watch local processes.
func (w *watchTable) watchedFrom(addr string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.in[addr]) > 0
}

// counts returns the number of outbound and inbound watches (for tests and
// diagnostics).
func (w *watchTable) counts() (out, in int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.out {
		out += len(m)
	}
	for _, m := range w.in {
		in += len(m)
	}
	return out, in
}

// WatchCounts returns how many remote watches this node holds: local
// watchers of processes on other nodes (out) and watchers on other nodes of
// local processes (in). For diagnostics and tests.
func (r *Remote) WatchCounts() (out, in int) { return r.watches.counts() }
