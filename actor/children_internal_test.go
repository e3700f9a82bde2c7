package actor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A name can be spawned again before the parent has processed the old
// child's Terminated: the set must tell the two incarnations apart.
func TestChildSetNameReuse(t *testing.T) {
	var s childSet
	old := NewPID(LocalAddress, "unique")
	s.add(old)
	reborn := NewPID(LocalAddress, "unique")
	s.add(reborn)
	require.True(t, s.remove(old), "the old incarnation's Terminated")
	require.True(t, s.contains(reborn))
	require.Equal(t, 1, s.live)
	require.Equal(t, []*PID{reborn}, s.snapshot())
	require.False(t, s.remove(NewPID("10.0.0.1:4000", "unique")), "a remote PID with the same ID is not a child")
	require.True(t, s.remove(reborn))
	require.Equal(t, 0, s.live)
}

func TestChildSetOrderAndCompaction(t *testing.T) {
	var s childSet
	var pids []*PID
	for i := 0; i < 100; i++ {
		p := NewPID(LocalAddress, string(rune('a'+i%26))+string(rune('0'+i/26)))
		pids = append(pids, p)
		s.add(p)
	}
	for i := 0; i < 100; i += 2 {
		require.True(t, s.remove(pids[i]))
	}
	got := s.snapshot()
	require.Len(t, got, 50)
	for i, p := range got {
		require.Same(t, pids[2*i+1], p, "spawn order kept across compaction")
	}
}
