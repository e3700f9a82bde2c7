package scheduler

import (
	"sync"
	"time"
)

// TimerSet tracks timers set on a Clock so that their owner can stop them all
// at shutdown and wait for callbacks already running. The zero value is ready.
type TimerSet struct {
	mu      sync.Mutex
	pending map[*setTimer]struct{}
	closed  bool
	firing  sync.WaitGroup
}

type setTimer struct {
	stop func() bool
}

func (s *TimerSet) after(clock Clock, d time.Duration, r Runnable, resume func(Runnable)) {
	s.After(clock, d, func() {
		if r.Wake() {
			resume(r)
		}
	})
}

// After calls f after d on clock unless the set is closed first. The returned
// cancel function stops the timer and reports whether it did.
func (s *TimerSet) After(clock Clock, d time.Duration, f func()) (cancel func() bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return func() bool { return false }
	}
	if s.pending == nil {
		s.pending = make(map[*setTimer]struct{})
	}
	t := &setTimer{}
	s.pending[t] = struct{}{}
	s.firing.Add(1)
	t.stop = clock.AfterFunc(d, func() {
		defer s.firing.Done()
		s.mu.Lock()
		_, ok := s.pending[t]
		delete(s.pending, t)
		closed := s.closed
		s.mu.Unlock()
		if ok && !closed {
			f()
		}
	})
	return func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		if _, ok := s.pending[t]; !ok || !t.stop() {
			return false
		}
		delete(s.pending, t)
		s.firing.Done()
		return true
	}
}

// Len returns the number of timers not yet fired.
func (s *TimerSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// Close stops every pending timer and waits for callbacks already running.
// Later calls to After do nothing. It is idempotent.
func (s *TimerSet) Close() {
	s.mu.Lock()
	s.closed = true
	for t := range s.pending {
		if t.stop() {
			s.firing.Done()
		}
		delete(s.pending, t)
	}
	s.mu.Unlock()
	s.firing.Wait()
}
