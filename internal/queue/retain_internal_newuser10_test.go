package queue

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// An actor's system queue is an InlineMPSC whose first segment lives in the
// actor's cell, for the cell's life. Once the consumer has moved past that
// segment, nothing may stay reachable from it: neither the values it held
// nor, through its link, the segments that followed with the values in
// them. A cell is kept by whoever still holds the actor's PID (a PID caches
// its cell), and system messages name other actors (a Terminated's Who, a
// Watch's watcher), whose cells kept their own: the soak trial
// (testkit/soak) saw chains of stopped actors, and with them whole stopped
// actor systems, grow with every round of churn.
func TestNewuser10InlineSegmentReleasedWhenLeft(t *testing.T) {
	type msg struct{ payload []byte }
	var q InlineMPSC[*msg]
	q.Init()
	// Far past the inline segment, over several linked segments, popped in
	// one run (no Release in between, as when a busy actor takes a burst
	// of system messages), then released as the mailbox does when idle.
	const n = 1000
	for range n {
		q.Push(&msg{payload: make([]byte, 64)})
	}
	for range n {
		_, ok := q.Pop()
		require.True(t, ok)
	}
	q.Release()
	for i := range q.slots {
		require.Nil(t, q.slots[i].val, "inline slot %d still holds a consumed value", i)
	}
	linked := 0
	for s := q.seg.next.Load(); s != nil; s = s.next.Load() {
		linked++
	}
	require.Zero(t, linked, "segments still reachable from the inline segment")

	// The queue works on.
	for i := range 3 {
		q.Push(&msg{payload: []byte{byte(i)}})
	}
	for i := range 3 {
		v, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, []byte{byte(i)}, v.payload)
	}
}

// A queue that never leaves its inline segment clears its consumed slots on
// Release, as before.
func TestNewuser10InlineSegmentClearedOnRelease(t *testing.T) {
	var q InlineMPSC[*int]
	q.Init()
	v := 1
	q.Push(&v)
	_, ok := q.Pop()
	require.True(t, ok)
	q.Release()
	require.Nil(t, q.slots[0].val)
}
