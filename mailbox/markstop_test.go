package mailbox_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// MarkStop reports true to exactly one caller, however many race, and
// leaves suspension alone (one word holds both); SystemLen counts the
// queued system messages.
func TestMailboxMarkStopOnceAndSystemLen(t *testing.T) {
	mb, _ := newMailbox(nil)
	require.False(t, mb.StopMarked())
	mb.Suspend()
	var firsts sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for range 8 {
		firsts.Go(func() {
			if mb.MarkStop() {
				mu.Lock()
				won++
				mu.Unlock()
			}
		})
	}
	firsts.Wait()
	require.Equal(t, 1, won)
	require.True(t, mb.StopMarked())
	require.True(t, mb.Suspended(), "MarkStop keeps the suspension")
	mb.Resume()
	require.False(t, mb.Suspended())
	require.True(t, mb.StopMarked(), "Resume keeps the mark")
	mb.Suspend()
	require.True(t, mb.StopMarked(), "Suspend keeps the mark")

	require.Zero(t, mb.SystemLen())
	for i := range 5 {
		mb.PostSystem(nil, i)
	}
	require.Equal(t, 5, mb.SystemLen())
	_, _ = mb.PopSystem()
	require.Equal(t, 4, mb.SystemLen())
}
