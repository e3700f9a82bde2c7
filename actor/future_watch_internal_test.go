package actor

import (
	"sync"
	"testing"
)

// termRecorder is a process that records the Terminated it is sent.
type termRecorder struct {
	mu   sync.Mutex
	who  []*PID
	self PID
	ref  procRef
}

func newTermRecorder(s *System, id string) *termRecorder {
	r := &termRecorder{}
	r.self.Address, r.self.ID = s.Address(), id
	r.ref.p = r
	r.self.cacheRef(&r.ref)
	return r
}

func (r *termRecorder) SendUser(*PID, any, *PID) {}
func (r *termRecorder) SendSystem(_ *PID, m SystemMessage) {
	if t, ok := m.(*TerminatedSystem); ok {
		r.mu.Lock()
		r.who = append(r.who, t.Who)
		r.mu.Unlock()
	}
}
func (r *termRecorder) StopProcess(*PID) {}

func (r *termRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.who)
}

// A future's watchers are a set: a watcher that watches again is told
// once when the future completes, an Unwatch takes it out, and a Watch
// after the completion is told at once. Before, every Watch added a relay
// (told once each) and Unwatch was ignored.
func TestFutureWatchersAreASet(t *testing.T) {
	sys := newTestSystem(t)
	f := sys.newFuture(nil, 0)
	again := newTermRecorder(sys, "again")
	gone := newTermRecorder(sys, "gone")
	for range 100 {
		f.SendSystem(f.PID(), &Watch{Watcher: &again.self})
		f.SendSystem(f.PID(), &Watch{Watcher: &gone.self})
		f.SendSystem(f.PID(), &Unwatch{Watcher: &gone.self})
	}
	if f.pipes == nil || len(f.pipes.watchers.list) != 1 {
		t.Fatalf("pending future holds %+v, want one watcher", f.pipes)
	}
	f.Complete("v", nil)
	if again.count() != 1 || gone.count() != 0 {
		t.Fatalf("told %d and %d times, want 1 and 0", again.count(), gone.count())
	}
	if again.who[0] != f.PID() {
		t.Fatalf("Terminated of %v, want the future", again.who[0])
	}
	late := newTermRecorder(sys, "late")
	f.SendSystem(f.PID(), &Watch{Watcher: &late.self})
	if late.count() != 1 {
		t.Fatalf("a watch after completion told %d times", late.count())
	}
}
