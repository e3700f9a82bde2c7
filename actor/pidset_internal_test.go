package actor

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The watched set stays a set across the switch from slice to map.
func TestPIDSet(t *testing.T) {
	var s pidSet
	pids := make([]*PID, 3*pidSetSmall)
	for i := range pids {
		pids[i] = NewPID("a:1", fmt.Sprint("p", i))
		require.True(t, s.add(pids[i]))
		require.False(t, s.add(NewPID("a:1", fmt.Sprint("p", i))), "an equal PID is already in")
	}
	require.NotNil(t, s.m, "a large set is indexed")
	for i, p := range pids {
		if i%2 == 0 {
			require.True(t, s.remove(NewPID(p.Address, p.ID)))
			require.False(t, s.remove(p))
		}
	}
	n := 0
	s.each(func(p *PID) {
		n++
		var idx int
		_, _ = fmt.Sscanf(p.ID, "p%d", &idx)
		require.Equal(t, 1, idx%2, "only the odd ones are left")
	})
	require.Equal(t, len(pids)/2, n)
}

// Watching many actors costs the same per watch whatever the count: 20,000
// watches and their Terminated finish (a slice scan made it quadratic).
func BenchmarkWatchMany(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		var s pidSet
		for i := range 20000 {
			s.add(NewPID("a:1", fmt.Sprint(i)))
		}
		for i := range 20000 {
			s.remove(NewPID("a:1", fmt.Sprint(i)))
		}
	}
}
