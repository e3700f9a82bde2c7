package actor

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func testCell(id string) *cell {
	c := &cell{childSlot: -1}
	c.pid = PID{Address: LocalAddress, ID: id}
	c.self = &c.pid
	c.self.local.Store(c)
	return c
}

// A name can be spawned again before the parent has processed the old
// child's Terminated: the set must tell the two incarnations apart.
func TestChildSetNameReuse(t *testing.T) {
	var s childSet
	old := testCell("unique")
	s.add(old)
	reborn := testCell("unique")
	s.add(reborn)
	require.True(t, s.remove(old), "the old incarnation's Terminated")
	require.False(t, s.remove(old), "removed once")
	require.True(t, s.contains(reborn))
	require.Equal(t, 1, s.live)
	require.Equal(t, []*PID{reborn.self}, s.snapshot())
	require.False(t, s.remove(testCell("unique")), "another cell with the same ID is not a child")
	require.True(t, s.remove(reborn))
	require.Equal(t, 0, s.live)
}

func TestChildSetOrderAndCompaction(t *testing.T) {
	var s childSet
	var kids []*cell
	for i := 0; i < 100; i++ {
		k := testCell("k" + strconv.Itoa(i))
		kids = append(kids, k)
		s.add(k)
	}
	for i := 0; i < 100; i += 2 {
		require.True(t, s.remove(kids[i]))
	}
	got := s.snapshot()
	require.Len(t, got, 50)
	for i, p := range got {
		require.Same(t, kids[2*i+1].self, p, "spawn order kept across compaction")
	}
	for i := 1; i < 100; i += 2 {
		require.True(t, s.contains(kids[i]), "slots follow the compaction")
	}
	for i := 1; i < 100; i += 2 {
		require.True(t, s.remove(kids[i]))
	}
	require.Zero(t, s.live)
}

// A remote PID (or one of another system) that carries a local child's ID
// is not that child.
func TestRemoveChildByForeignPID(t *testing.T) {
	parent := testCell("p")
	kid := testCell("p/k")
	kid.parent = parent.self
	parent.addChild(kid)
	require.False(t, parent.removeChild(NewPID("10.0.0.1:4000", "p/k")))
	other := testCell("p/k") // a cell whose parent is someone else
	require.False(t, parent.removeChild(other.self))
	require.True(t, parent.isChild(kid.self))
	require.True(t, parent.removeChild(kid.self))
	require.False(t, parent.isChild(kid.self))
}
