package cluster

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/actor"
	"github.com/fraktor-go/fraktor/remote"
)

// maxLinkFailures bounds the addresses linkFailures remembers: a member
// dials only members' addresses and the senders of what it answers, but
// an address is only forgotten when a connection to it comes up.
const maxLinkFailures = 1024

// linkFailures remembers, per address, why this member's last attempt to
// connect to it failed (a failed dial, or a handshake either side
// refused: another cluster's name, a certificate, a block), until a
// connection to the address is up again. It is filled from remote's
// *remote.Event on the EventStream.
//
// Without it a request to a grain whose owner this member cannot reach
// failed with a bare timeout ("activation request to m#1: actor:
// timeout"): the remote layer queues what is sent while it redials, and
// the reason it logged at Info never reached the caller. explain adds the
// reason to such a timeout, so the caller reads, say, "system name
// mismatch" and errors.Is(err, remote.ErrClusterMismatch) holds
// (TestRequestTimeoutNamesTheRefusedHandshake).
//
// It also keeps when each address's link went down (the first failure
// since the last connection), for the reachability vote (unreachable).
type linkFailures struct {
	mu  sync.Mutex
	m   map[string]linkDown
	up  map[string]struct{} // addresses whose last link event was a connection
	now func() time.Time    // the system clock; nil: the link's time is not kept
}

// linkDown is an address's last failure, when its link went down and
// when it last failed.
type linkDown struct {
	err         error
	since, last time.Time
}

// isLinkEvent selects the events record takes.
func isLinkEvent(ev any) bool {
	e, ok := ev.(*remote.Event)
	if !ok || e.Peer.Address == "" {
		return false
	}
	switch e.Kind {
	case remote.EventConnected, remote.EventDialFailed:
		return true
	case remote.EventHandshakeRefused:
		// Only this member's own attempts: refusing a peer's dial says
		// nothing of whether this member reaches it (a refused second
		// connection while this member's own is up, say). Nor does the
		// duplicate-connection rule's refusal of this member's second
		// connection: a connection to the peer is up, and it is the
		// normal outcome of both members dialling at once; recorded, it
		// named a working link as a timeout's cause
		// (TestNewuser9TimeoutDoesNotBlameTheRefusedDuplicateConnection).
		return !e.Inbound && !errors.Is(e.Err, remote.ErrDuplicateConnection)
	}
	return false
}

// record takes one event isLinkEvent selected.
func (l *linkFailures) record(ev any) {
	e := ev.(*remote.Event)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e.Kind == remote.EventConnected {
		delete(l.m, e.Peer.Address)
		if l.up == nil {
			l.up = make(map[string]struct{})
		}
		if _, ok := l.up[e.Peer.Address]; !ok && len(l.up) >= maxLinkFailures {
			for a := range l.up { // any one: the bound only keeps the map small
				delete(l.up, a)
				break
			}
		}
		l.up[e.Peer.Address] = struct{}{}
		return
	}
	if e.Err == nil {
		return
	}
	delete(l.up, e.Peer.Address)
	if l.m == nil {
		l.m = make(map[string]linkDown)
	}
	d, ok := l.m[e.Peer.Address]
	if !ok && len(l.m) >= maxLinkFailures {
		for a := range l.m { // any one: the bound only keeps the map small
			delete(l.m, a)
			break
		}
	}
	if l.now != nil {
		d.last = l.now()
		if !ok {
			d.since = d.last
		}
	}
	d.err = e.Err
	l.m[e.Peer.Address] = d
}

// downFor returns how long the link to address has been down, counted
// from from at the earliest (failures only since its last connection),
// and false when it is not down or has not failed since from: a member
// that came at an address after failures to reach another one there is
// judged by its own failures only.
func (l *linkFailures) downFor(address string, now, from time.Time) (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	d, ok := l.m[address]
	if !ok || d.since.IsZero() || d.last.Before(from) {
		return 0, false
	}
	return now.Sub(later(d.since, from)), true
}

// connected reports whether the last link event of address was a
// connection (none failed since).
func (l *linkFailures) connected(address string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.up[address]
	return ok
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// why returns the last connection failure to address on record, nil when
// none is.
func (l *linkFailures) why(address string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.m[address].err
}

// explain returns err with the last connection failure to address added,
// when err is a timeout and a failure is on record (the link is down, and
// that is why nothing came back); err itself otherwise.
func (l *linkFailures) explain(address string, err error) error {
	if err == nil || !errors.Is(err, actor.ErrTimeout) {
		return err
	}
	why := l.why(address)
	if why == nil || errors.Is(err, why) {
		// Nothing known, or the timeout names it already: remote adds the
		// same cause to the timeouts of requests to address
		// (actor.Host.SetTimeoutCause).
		return err
	}
	return fmt.Errorf("%w (no connection to %s: %w)", err, address, why)
}
