package testkit

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fraktor-go/fraktor/cluster"
)

// ErrStaleToken: a FencedStore refused a write or claim whose fencing token
// is lower than the highest it has seen for the identity.
var ErrStaleToken = errors.New("testkit: stale fencing token")

// StaleTokenError is the error of a refused write; it matches ErrStaleToken.
type StaleTokenError struct {
	Identity cluster.Identity
	Token    cluster.FencingToken // the refused token
	Highest  cluster.FencingToken // the highest the store has seen
}

func (e *StaleTokenError) Error() string {
	return fmt.Sprintf("testkit: stale fencing token for %s: %v < %v", e.Identity, e.Token, e.Highest)
}

// Is makes errors.Is(err, ErrStaleToken) hold.
func (e *StaleTokenError) Is(target error) bool { return target == ErrStaleToken }

// FencedWrite is one write a FencedStore accepted.
type FencedWrite struct {
	Identity cluster.Identity
	Token    cluster.FencingToken
	At       time.Time
}

// FencedStore is the storage a grain's state lives in, as a real store
// that checks fencing tokens would keep it: per identity the greatest token
// it has seen (from Claim and Write), and a write whose token is lower is
// refused with a *StaleTokenError. A grain claims its token when it starts
// (Claim) and writes before it replies; then an activation that runs on
// after its successor claimed cannot change the state. The store records
// every accepted write with its time, so an Observer can tell whether one
// came from an activation that had already been superseded
// (Observer.StaleWrites). Safe for concurrent use.
type FencedStore[V any] struct {
	now func() time.Time

	mu       sync.Mutex
	entries  map[cluster.Identity]*fencedEntry[V]
	writes   []FencedWrite
	refused  int
	accepted int
}

type fencedEntry[V any] struct {
	highest cluster.FencingToken
	value   V
	set     bool
}

// NewFencedStore returns an empty store whose writes are stamped with now
// (nil: time.Now); pass TestCluster.Now to share the cluster's clock with
// its Observer.
func NewFencedStore[V any](now func() time.Time) *FencedStore[V] {
	if now == nil {
		now = time.Now
	}
	return &FencedStore[V]{now: now, entries: map[cluster.Identity]*fencedEntry[V]{}}
}

func (s *FencedStore[V]) entryLocked(id cluster.Identity) *fencedEntry[V] {
	e := s.entries[id]
	if e == nil {
		e = &fencedEntry[V]{}
		s.entries[id] = e
	}
	return e
}

// Claim raises the identity's highest token to token, so writes with lower
// tokens are refused from now on; a token lower than the highest is refused.
func (s *FencedStore[V]) Claim(id cluster.Identity, token cluster.FencingToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryLocked(id)
	if token.Less(e.highest) {
		s.refused++
		return &StaleTokenError{Identity: id, Token: token, Highest: e.highest}
	}
	e.highest = token
	return nil
}

// Load returns the identity's value and whether one was written.
func (s *FencedStore[V]) Load(id cluster.Identity) (V, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entries[id]
	if e == nil {
		var zero V
		return zero, false
	}
	return e.value, e.set
}

// Write stores v for id under token, unless token is lower than the
// highest seen for id (then *StaleTokenError and nothing changes). The
// store keeps v as given: a grain must not modify v afterwards.
func (s *FencedStore[V]) Write(id cluster.Identity, token cluster.FencingToken, v V) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	e := s.entryLocked(id)
	if token.Less(e.highest) {
		s.refused++
		return &StaleTokenError{Identity: id, Token: token, Highest: e.highest}
	}
	e.highest, e.value, e.set = token, v, true
	s.accepted++
	s.writes = append(s.writes, FencedWrite{Identity: id, Token: token, At: s.now()})
	return nil
}

// Accepted returns how many writes were accepted.
func (s *FencedStore[V]) Accepted() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.accepted
}

// Refused returns how many writes and claims were refused as stale.
func (s *FencedStore[V]) Refused() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refused
}

// Writes returns the accepted writes in the order accepted.
func (s *FencedStore[V]) Writes() []FencedWrite {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FencedWrite(nil), s.writes...)
}

// Identities returns every identity the store has seen.
func (s *FencedStore[V]) Identities() []cluster.Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]cluster.Identity, 0, len(s.entries))
	for id := range s.entries {
		out = append(out, id)
	}
	return out
}
