package queue

import "testing"

// The consumer that moves past InlineMPSC's own segment cuts that
// segment's link to the next one (so the queue's owner keeps nothing it
// consumed). A producer that linked the next segment may not have moved
// the tail yet when that happens: the cut must not let a second producer,
// which still finds the inline segment as the tail, link another segment
// there and make it the tail, away from the one the consumer moved to
// (its values were never popped: lost). Played here step by step: P1
// links S2 but has not moved the tail; the consumer pops the inline
// values and moves to S2; P2 pushes; P1 finishes its push.
func TestInlineCutKeepsValuesOfALateTailMove(t *testing.T) {
	var q InlineMPSC[int]
	q.Init()
	q.Push(1)
	q.Push(2)
	// P1: claims past the inline segment and links S2, stopping before
	// its CAS of the tail (Push's loop, by hand).
	inline := q.tail.Load()
	inline.claim.Add(1)
	s2 := newSegment[int](min(2*len(inline.slots), maxSegment))
	s2.base = inline.base + uint64(len(inline.slots))
	if !inline.next.CompareAndSwap(nil, s2) {
		t.Fatal("S2 not linked")
	}
	// The consumer takes 1 and 2 and moves past the inline segment.
	for _, want := range []int{1, 2} {
		if v, ok := q.Pop(); !ok || v != want {
			t.Fatalf("Pop = %v, %v; want %d", v, ok, want)
		}
	}
	if _, ok := q.Pop(); ok { // moves to S2, empty
		t.Fatal("a value out of nowhere")
	}
	// P2 pushes while the tail may still be the inline segment.
	q.Push(3)
	// P1 finishes: its CAS of the tail, then its push where the tail is.
	q.tail.CompareAndSwap(inline, s2)
	q.Push(4)
	for _, want := range []int{3, 4} {
		if v, ok := q.Pop(); !ok || v != want {
			t.Fatalf("Pop = %v, %v; want %d (a value pushed after the cut was lost)", v, ok, want)
		}
	}
}
