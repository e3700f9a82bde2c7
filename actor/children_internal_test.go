package actor

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func testCell(id string) *cell {
	c := &cell{childSlot: -1}
	c.pid = PID{Address: LocalAddress, ID: id}
	c.pid.local.Store(c)
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
	require.Equal(t, []*PID{reborn.selfPID()}, s.snapshot())
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
		require.Same(t, kids[2*i+1].selfPID(), p, "spawn order kept across compaction")
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
	kid.parent = parent.selfPID()
	require.True(t, parent.addChild(kid))
	require.False(t, parent.removeChild(NewPID("10.0.0.1:4000", "p/k")))
	other := testCell("p/k") // a cell whose parent is someone else
	require.False(t, parent.removeChild(other.selfPID()))
	require.True(t, parent.isChild(kid.selfPID()))
	require.True(t, parent.removeChild(kid.selfPID()))
	require.False(t, parent.isChild(kid.selfPID()))
}

// A guardian spreads its children over several locks; Children still lists
// them in spawn order, and a stopped child leaves at once.
func TestGuardianChildrenInSpawnOrder(t *testing.T) {
	sys, err := NewSystem(SystemConfig{})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, sys.Shutdown(context.Background())) })
	g := sys.userGuardian
	var pids []*PID
	for i := 0; i < 50; i++ {
		pids = append(pids, sys.Root().Spawn(PropsFromFunc(func(Context) {})))
	}
	require.Equal(t, pids, g.childList())
	require.Equal(t, 50, g.childCount())
	for i := 0; i < 50; i += 3 {
		require.NoError(t, sys.Root().StopFuture(pids[i]).Wait())
	}
	var want []*PID
	for i, p := range pids {
		if i%3 != 0 {
			want = append(want, p)
			require.True(t, g.isChild(p))
		} else {
			require.False(t, g.isChild(p), "stopped: no longer a child")
		}
	}
	require.Equal(t, want, g.childList())
	require.Equal(t, len(want), g.childCount())
}

// Top-level actors spawned and stopped from several goroutines while the
// system shuts down: Shutdown still waits for every one of them.
func TestGuardianSpawnStopRace(t *testing.T) {
	for round := 0; round < 100; round++ {
		sys, err := NewSystem(SystemConfig{})
		require.NoError(t, err)
		var stopped atomic.Int64
		props := PropsFromFunc(func(c Context) {
			if _, ok := c.Message().(*Stopped); ok {
				stopped.Add(1)
			}
		})
		var spawned atomic.Int64
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for i := 0; i < 500; i++ {
					pid, err := sys.Root().SpawnNamed(props, "")
					if err != nil {
						return // the system is stopping
					}
					spawned.Add(1)
					if i%2 == 0 {
						sys.Root().Stop(pid)
					}
				}
			})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		require.NoError(t, sys.Shutdown(ctx), "round %d", round)
		cancel()
		wg.Wait()
		require.Equal(t, spawned.Load(), stopped.Load(), "round %d: every spawned actor stopped", round)
	}
}
