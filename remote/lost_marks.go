package remote

import "sync"

// lostMarks keeps, per peer address, the actor system's request mark
// (actor.Host.RequestMark) taken when the last connection to the
// incarnation there closed. When a new incarnation then answers at that
// address (ErrPeerRestarted), only the requests made before the mark can
// have reached the old one, whose answer will never come: those fail; the
// ones made after it were queued while no connection was up, and they go
// to the new incarnation, which answers them (peerTerminated). Before, the
// restart failed every pending request to the address, also those the new
// incarnation then handled: their callers saw ErrPeerRestarted for requests
// that had taken effect (TestRestartSparesRequestsMadeAfterTheLoss). A
// request made before the loss and still queued at it is failed all the
// same (its outcome is unknown to the caller, as documented).
//
// Bounded: at maxLostMarks addresses, a new one evicts an arbitrary other,
// whose restart then fails every pending request as before.
type lostMarks struct {
	mu sync.Mutex
	m  map[string]lostMark // by peer address
}

type lostMark struct {
	nodeID string
	mark   uint64
}

const maxLostMarks = 4096

// lost records mark for the incarnation id at addr, whose connection closed.
func (l *lostMarks) lost(addr, id string, mark uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]lostMark{}
	}
	if _, ok := l.m[addr]; !ok && len(l.m) >= maxLostMarks {
		for k := range l.m {
			delete(l.m, k)
			break
		}
	}
	l.m[addr] = lostMark{nodeID: id, mark: mark}
}

// connected forgets the mark of the incarnation id at addr: a connection
// to it is up again, and what is made from now on may be written to it. A
// connection to another incarnation (the restart itself) keeps the mark
// for the restart's report.
func (l *lostMarks) connected(addr, id string) {
	l.mu.Lock()
	if lm, ok := l.m[addr]; ok && lm.nodeID == id {
		delete(l.m, addr)
	}
	l.mu.Unlock()
}

// take returns and forgets the mark of the incarnation id at addr, if its
// last connection's close left one.
func (l *lostMarks) take(addr, id string) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lm, ok := l.m[addr]
	if !ok {
		return 0, false
	}
	delete(l.m, addr)
	return lm.mark, lm.nodeID == id
}
