package cluster

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const ledgerShardCount = 32 // power of two

// ActivationLedger grants activation leases: at most one lease per identity
// holds it (Active or Releasing) at any time (V1.2, V1.3). Each lease is
// bound to the ledger's current view (topology hash and epoch); a request
// made under another view is refused with ErrOwnershipChanged.
//
// All methods are safe for concurrent use: the identities are spread over
// mutex-guarded shards, and the view is guarded by a read-write lock that
// Acquire holds shared, so SetView waits for in-flight grants. No method
// blocks on anything but these locks, and none starts a goroutine.
//
// Terminal leases (Revoked, TimedOut) stay in the ledger, visible through
// Lookup, until Release removes them or Acquire replaces them; Release
// removes the lease entirely.
type ActivationLedger struct {
	view         sync.RWMutex
	hash         uint64
	epoch        uint64
	shuttingDown bool

	seq    atomic.Uint64
	shards [ledgerShardCount]ledgerShard
}

type ledgerShard struct {
	mu     sync.Mutex
	leases map[Identity]ledgerEntry
	_      [40]byte // keep shards on separate cache lines
}

// ledgerEntry is a lease as the ledger stores it, one per identity: without
// the identity (the map key) and the epoch (the token's), which Lease
// repeats.
type ledgerEntry struct {
	leaseID uint64
	owner   string
	hash    uint64
	token   FencingToken
	status  LeaseStatus
}

func (e ledgerEntry) lease(id Identity) Lease {
	return Lease{LeaseID: e.leaseID, Identity: id, Owner: e.owner, TopologyHash: e.hash,
		Epoch: e.token.Epoch, Token: e.token, Status: e.status}
}

// NewActivationLedger returns an empty ledger at view (hash 0, epoch 0).
// Call SetView with the first real view before acquiring.
func NewActivationLedger() *ActivationLedger {
	l := &ActivationLedger{}
	for i := range l.shards {
		l.shards[i].leases = make(map[Identity]ledgerEntry)
	}
	return l
}

func (l *ActivationLedger) shard(id Identity) *ledgerShard {
	return &l.shards[identityHash(0, id)&(ledgerShardCount-1)]
}

// SetView makes (hash, epoch) the ledger's current view: from now on only
// acquisitions carrying hash succeed. An epoch lower than the current one is
// refused with ErrStaleView, which keeps fencing tokens growing. Existing
// leases are not touched; the runtime revokes or releases them as ownership
// moves.
func (l *ActivationLedger) SetView(hash, epoch uint64) error {
	l.view.Lock()
	defer l.view.Unlock()
	if epoch < l.epoch {
		return fmt.Errorf("%w: epoch %d < current %d", ErrStaleView, epoch, l.epoch)
	}
	l.hash, l.epoch = hash, epoch
	return nil
}

// View returns the current topology hash and epoch.
func (l *ActivationLedger) View() (hash, epoch uint64) {
	l.view.RLock()
	defer l.view.RUnlock()
	return l.hash, l.epoch
}

// Acquire grants owner the lease of id under the view topologyHash. It
// fails with ErrOwnershipChanged when topologyHash is not the ledger's
// current hash, ErrShuttingDown after BeginShutdown, and *LeaseHeldError
// (errors.Is ErrLeaseHeld) while another lease of id is Active or Releasing.
// A Revoked, Released or TimedOut lease is replaced. The new lease's token
// is (current epoch, next sequence number): greater than every token this
// ledger granted before.
func (l *ActivationLedger) Acquire(id Identity, owner string, topologyHash uint64) (Lease, error) {
	if err := id.Validate(); err != nil {
		return Lease{}, err
	}
	if owner == "" {
		return Lease{}, fmt.Errorf("%w: acquire %s with an empty owner", ErrNoAuthority, id)
	}
	l.view.RLock()
	defer l.view.RUnlock()
	if l.shuttingDown {
		return Lease{}, ErrShuttingDown
	}
	if topologyHash != l.hash {
		return Lease{}, fmt.Errorf("%w: request view %016x, ledger view %016x", ErrOwnershipChanged, topologyHash, l.hash)
	}
	s := l.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if cur, ok := s.leases[id]; ok && cur.status.Holds() {
		return Lease{}, &LeaseHeldError{Holder: cur.lease(id)}
	}
	seq := l.seq.Add(1)
	e := ledgerEntry{leaseID: seq, owner: owner, hash: l.hash,
		token: FencingToken{Epoch: l.epoch, Seq: seq}, status: LeaseStatus{State: LeaseActive}}
	s.leases[id] = e
	return e.lease(id), nil
}

// Release removes the lease leaseID of id, whatever its state, and returns
// it with status Released. It fails with ErrLeaseNotFound when id has no
// lease and ErrStaleLease when id's lease is another one.
func (l *ActivationLedger) Release(id Identity, leaseID uint64) (Lease, error) {
	s := l.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := current(s, id, leaseID)
	if err != nil {
		return Lease{}, err
	}
	delete(s.leases, id)
	cur.status = LeaseStatus{State: LeaseReleased}
	return cur.lease(id), nil
}

func current(s *ledgerShard, id Identity, leaseID uint64) (ledgerEntry, error) {
	cur, ok := s.leases[id]
	if !ok {
		return ledgerEntry{}, fmt.Errorf("%w: %s", ErrLeaseNotFound, id)
	}
	if cur.leaseID != leaseID {
		return ledgerEntry{}, fmt.Errorf("%w: %s: lease %d, current %d", ErrStaleLease, id, leaseID, cur.leaseID)
	}
	return cur, nil
}

// MarkReleasing moves an Active lease to Releasing with the given deadline
// (or moves a Releasing lease's deadline). Other states give ErrStaleLease.
func (l *ActivationLedger) MarkReleasing(id Identity, leaseID uint64, deadline time.Time) (Lease, error) {
	s := l.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, err := current(s, id, leaseID)
	if err != nil {
		return Lease{}, err
	}
	if !cur.status.Holds() {
		return Lease{}, fmt.Errorf("%w: %s: lease %d is %s", ErrStaleLease, id, leaseID, cur.status.State)
	}
	cur.status = LeaseStatus{State: LeaseReleasing, Deadline: deadline}
	s.leases[id] = cur
	return cur.lease(id), nil
}

// BeginShutdown starts a graceful shutdown: every later Acquire fails with
// ErrShuttingDown, and every Active lease becomes Releasing with deadline.
// It returns the leases it moved, sorted by identity.
func (l *ActivationLedger) BeginShutdown(deadline time.Time) []Lease {
	l.view.Lock()
	l.shuttingDown = true
	l.view.Unlock()
	return l.transition(func(cur Lease) (LeaseStatus, bool) {
		if cur.Status.State != LeaseActive {
			return LeaseStatus{}, false
		}
		return LeaseStatus{State: LeaseReleasing, Deadline: deadline}, true
	})
}

// ShuttingDown reports whether BeginShutdown was called.
func (l *ActivationLedger) ShuttingDown() bool {
	l.view.RLock()
	defer l.view.RUnlock()
	return l.shuttingDown
}

// ExpireReleasing moves every Releasing lease whose deadline is not after
// now to TimedOut and returns them, sorted by identity. A TimedOut lease no
// longer holds its identity, so it may be acquired again.
func (l *ActivationLedger) ExpireReleasing(now time.Time) []Lease {
	return l.transition(func(cur Lease) (LeaseStatus, bool) {
		if cur.Status.State != LeaseReleasing || now.Before(cur.Status.Deadline) {
			return LeaseStatus{}, false
		}
		return LeaseStatus{State: LeaseTimedOut}, true
	})
}

// RevokeMember revokes every lease of owner (a member ID) that still holds
// its identity, at once (V1.4, B2.3), and returns them sorted by identity.
// The identities become free to acquire.
func (l *ActivationLedger) RevokeMember(owner string) []Lease {
	return l.transition(func(cur Lease) (LeaseStatus, bool) {
		if cur.Owner != owner || !cur.Status.Holds() {
			return LeaseStatus{}, false
		}
		return LeaseStatus{State: LeaseRevoked}, true
	})
}

// Revoke revokes the lease of id if it still holds the identity.
func (l *ActivationLedger) Revoke(id Identity) (Lease, error) {
	s := l.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.leases[id]
	if !ok {
		return Lease{}, fmt.Errorf("%w: %s", ErrLeaseNotFound, id)
	}
	if !cur.status.Holds() {
		return Lease{}, fmt.Errorf("%w: %s: lease %d is %s", ErrStaleLease, id, cur.leaseID, cur.status.State)
	}
	cur.status = LeaseStatus{State: LeaseRevoked}
	s.leases[id] = cur
	return cur.lease(id), nil
}

func (l *ActivationLedger) transition(next func(Lease) (LeaseStatus, bool)) []Lease {
	var out []Lease
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, e := range s.leases {
			if st, ok := next(e.lease(id)); ok {
				e.status = st
				s.leases[id] = e
				out = append(out, e.lease(id))
			}
		}
		s.mu.Unlock()
	}
	sortLeases(out)
	return out
}

// Lookup returns the lease of id in whatever state it is.
func (l *ActivationLedger) Lookup(id Identity) (Lease, bool) {
	s := l.shard(id)
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, ok := s.leases[id]
	if !ok {
		return Lease{}, false
	}
	return cur.lease(id), true
}

// CheckToken returns nil when token is the token of id's lease and that
// lease still holds the identity (Active, or Releasing while it stops), and
// ErrStaleLease (or ErrLeaseNotFound) otherwise. Storage adapters call it to
// fence writes of stale activations.
func (l *ActivationLedger) CheckToken(id Identity, token FencingToken) error {
	cur, ok := l.Lookup(id)
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", ErrLeaseNotFound, id)
	case cur.Token != token:
		return fmt.Errorf("%w: %s: token %s, current %s", ErrStaleLease, id, token, cur.Token)
	case !cur.Status.Holds():
		return fmt.Errorf("%w: %s: lease %d is %s", ErrStaleLease, id, cur.LeaseID, cur.Status.State)
	}
	return nil
}

// Held returns the number of leases that hold their identity (Active or
// Releasing): the virtual-actor gauge (B4.3).
func (l *ActivationLedger) Held() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for _, cur := range s.leases {
			if cur.status.Holds() {
				n++
			}
		}
		s.mu.Unlock()
	}
	return n
}

// Len returns the number of leases in the ledger, in any state.
func (l *ActivationLedger) Len() int {
	n := 0
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		n += len(s.leases)
		s.mu.Unlock()
	}
	return n
}

// Leases returns a copy of every lease, sorted by identity.
func (l *ActivationLedger) Leases() []Lease {
	var out []Lease
	for i := range l.shards {
		s := &l.shards[i]
		s.mu.Lock()
		for id, cur := range s.leases {
			out = append(out, cur.lease(id))
		}
		s.mu.Unlock()
	}
	sortLeases(out)
	return out
}

func sortLeases(ls []Lease) {
	slices.SortFunc(ls, func(a, b Lease) int { return compareIdentities(a.Identity, b.Identity) })
}

func compareIdentities(a, b Identity) int {
	if c := strings.Compare(a.Kind, b.Kind); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}
