package actor

import "testing"

// A future's ID is its sequence number and a random tag (futureID.format):
// consecutive futures' IDs differ in the tag too, so a peer that saw one
// cannot name the next (TestForgedAnswerToFutureRefused, remote), while
// the sequence, which RequestMark orders by, reads back from the ID.
func TestFutureIDTagged(t *testing.T) {
	sys := newTestSystem(t)
	sys.registerFutures.Store(true)
	tags := map[string]bool{}
	prevSeq := uint64(0)
	for i := range 1000 {
		f := sys.newFuture(nil, 0)
		id := f.PID().ID
		seq, ok := seqOfFutureID(id)
		if !ok || seq != f.seq() || (i > 0 && seq != prevSeq+1) {
			t.Fatalf("future %d: ID %q reads sequence %d, %v after %d", i, id, seq, ok, prevSeq)
		}
		prevSeq = seq
		tag := id[len(id)-futureTagLen:]
		if tags[tag] {
			t.Fatalf("future %d: tag %q again", i, tag)
		}
		tags[tag] = true
		if p, ok := sys.registry.get(id); !ok || p != Process(f) {
			t.Fatalf("future %d (%q) does not resolve", i, id)
		}
		f.Complete(nil, nil)
	}
	for _, bad := range []string{"future$", "future$1", "future$!00000000", "x$100000000"} {
		if _, ok := seqOfFutureID(bad); ok {
			t.Fatalf("seqOfFutureID(%q) ok", bad)
		}
	}
}
