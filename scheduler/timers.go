package scheduler

import (
	"sync"
	"time"
)

// timerSet tracks the resume timers of an executor so that Shutdown can stop
// them and wait for those already firing.
type timerSet struct {
	mu      sync.Mutex
	pending map[*resumeTimer]struct{}
	closed  bool
	firing  sync.WaitGroup
}

type resumeTimer struct {
	stop func() bool
}

func (s *timerSet) after(clock Clock, d time.Duration, r Runnable, resume func(Runnable)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return
	}
	if s.pending == nil {
		s.pending = make(map[*resumeTimer]struct{})
	}
	t := &resumeTimer{}
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
			resume(r)
		}
	})
}

// len returns the number of timers not yet fired.
func (s *timerSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// close stops every pending timer and waits for callbacks already running.
func (s *timerSet) close() {
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
