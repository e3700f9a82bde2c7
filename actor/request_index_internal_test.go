package actor

import (
	"context"
	"errors"
	"hash/maphash"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// dropAll stands for the processes of other nodes: it drops everything.
type dropAll struct{}

func (dropAll) SendUser(*PID, any, *PID)       {}
func (dropAll) SendSystem(*PID, SystemMessage) {}
func (dropAll) StopProcess(*PID)               {}

// remoteTestSystem is a system whose PIDs of other addresses resolve to
// dropAll, with its futures registered, as under remote.
func remoteTestSystem(tb testing.TB) *System {
	tb.Helper()
	sys, err := NewSystem(SystemConfig{})
	require.NoError(tb, err)
	// Not tb.Context(): it has ended when cleanups run, and Shutdown
	// would return while the workers still stop the test's actors, which
	// then run on into the next test (its allocation counts, its caller
	// turns).
	tb.Cleanup(func() { require.NoError(tb, sys.Shutdown(context.Background())) })
	host{sys}.SetRemoteHandler(func(*PID) Process { return dropAll{} })
	return sys
}

// indexed returns how many futures the request index holds under address.
func (r *registry) indexed(address string) int {
	s := r.requests.shard(r.seed, address)
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.m[address].m)
}

// spawnIdle spawns n actors that do nothing.
func spawnIdle(tb testing.TB, sys *System, n int) {
	tb.Helper()
	props := PropsFromFunc(func(Context) {})
	for range n {
		sys.Root().Spawn(props)
	}
	require.GreaterOrEqual(tb, sys.ProcessCount(), n)
}

// TestFailRequestsToWalksNoActors: with many actors, peer after peer
// terminating fails exactly the requests pending to each, and no
// termination walks the registry (before, each one visited every actor).
// Requests to another peer and local requests are left alone.
func TestFailRequestsToWalksNoActors(t *testing.T) {
	sys := remoteTestSystem(t)
	const actors, peers, pending = 20_000, 50, 3
	spawnIdle(t, sys, actors)
	gone := errors.New("node gone")
	other := sys.Root().RequestFuture(NewPID("alive:1", "a"), "hello", 0)
	local := sys.Root().RequestFuture(sys.Root().Spawn(PropsFromFunc(func(Context) {})), "no answer", 0)
	require.Equal(t, 1, sys.registry.indexed("alive:1"))

	before := sys.registry.visits.Load()
	for p := range peers {
		addr := "dead:" + strconv.Itoa(p)
		fs := make([]*Future, pending)
		for i := range fs {
			fs[i] = sys.Root().RequestFuture(NewPID(addr, "a"), "hello", 0)
		}
		require.Equal(t, pending, sys.failRequestsTo(addr, gone, 0), addr)
		for _, f := range fs {
			_, err := f.Result()
			require.ErrorIs(t, err, ErrDeadLetter)
			require.ErrorIs(t, err, gone)
		}
		require.Zero(t, sys.failRequestsTo(addr, gone, 0), "nothing left to fail at %s", addr)
		require.Zero(t, sys.registry.indexed(addr))
	}
	assert.Zero(t, sys.registry.visits.Load()-before, "a peer's termination walked the registry")

	for _, f := range []*Future{other, local} {
		select {
		case <-f.Done():
			t.Fatal("a future that is not a request to a dead address completed")
		default:
		}
	}
	assert.Zero(t, sys.registry.indexed(sys.Address()), "a local request is not indexed")
	other.StopProcess(other.PID())
	local.StopProcess(local.PID())
	assert.Zero(t, sys.registry.indexed("alive:1"), "a completed request leaves the index")
}

// TestIndexRequestCompletedMeanwhile: a request that completes between its
// registration and its indexing (an answer to its ID) is not left in the
// index, where it would stay until its target's node went.
func TestIndexRequestCompletedMeanwhile(t *testing.T) {
	sys := remoteTestSystem(t)
	f := sys.Root().RequestFuture(NewPID("far:1", "a"), "hello", 0)
	require.Equal(t, regIndexed, f.reg)
	f.complete("answer", nil)
	require.Zero(t, sys.registry.indexed("far:1"))
	sys.indexRequest(f) // what startFuture does after the registry's add
	assert.Zero(t, sys.registry.indexed("far:1"), "a completed future stayed in the index")
}

// TestRequestIndexOnlyWithRemote: without a remote handler futures are not
// registered, and a request to another address is not indexed either.
func TestRequestIndexOnlyWithRemote(t *testing.T) {
	sys := newTestSystem(t)
	f := sys.Root().RequestFuture(NewPID("far:1", "a"), "hello", 0)
	assert.Equal(t, regNone, f.reg)
	assert.Zero(t, sys.registry.indexed("far:1"))
	_, err := f.Result()
	assert.ErrorIs(t, err, ErrDeadLetter)
}

// BenchmarkFailRequestsTo: one request to a peer, then the peer's
// termination, on a system with idle actors; ns/op should not grow with
// the actor count.
//
//	go test ./actor -run '^$' -bench FailRequestsTo -benchmem
func BenchmarkFailRequestsTo(b *testing.B) {
	for _, actors := range []int{0, 100_000} {
		b.Run("actors="+strconv.Itoa(actors), func(b *testing.B) {
			sys := remoteTestSystem(b)
			spawnIdle(b, sys, actors)
			gone := errors.New("node gone")
			pid := NewPID("dead:1", "a")
			b.ReportAllocs()
			for b.Loop() {
				f := sys.Root().RequestFuture(pid, "hello", 0)
				if n := sys.failRequestsTo(pid.Address, gone, 0); n != 1 {
					b.Fatalf("failed %d requests, want 1", n)
				}
				_ = f.Wait()
			}
		})
	}
}

// TestIndexedOnlyAfterRegistered: a request is indexed by address only
// once the registry has it by ID. The index's hook fails the request at
// the first moment failRequestsTo can find it; had the index come first,
// that failure would find nothing to unregister, and the registry's add
// after it would keep the completed future registered for good. Before,
// only TestFailRequestsToRacesNewRequests caught a swapped order, by
// chance.
func TestIndexedOnlyAfterRegistered(t *testing.T) {
	sys := remoteTestSystem(t)
	gone := errors.New("node gone")
	failed := 0
	sys.registry.requests.onIndexed = func(f *Future) {
		failed += sys.failRequestsTo(f.target.Address, gone, 0)
	}
	processes := sys.ProcessCount()
	f := sys.Root().RequestFuture(NewPID("far:1", "a"), "hello", 0)
	require.Equal(t, 1, failed, "the hook ran once and failed the request")
	_, err := f.Result()
	require.ErrorIs(t, err, gone)
	_, registered := sys.registry.get(f.PID().ID)
	assert.False(t, registered, "a request failed as soon as it was indexed stayed registered")
	assert.Equal(t, processes, sys.ProcessCount())
	assert.Zero(t, sys.registry.indexed("far:1"))
}

// heapAfterGC returns the bytes of live heap objects after a collection.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestRequestSetShrinksAfterBurst: a burst of requests to one peer that
// stays, answered but for one, leaves its set the room of the one, not of
// the burst. Before, the set's map kept the room it grew to (about 2 MB
// for this burst) until the peer's node was failed.
func TestRequestSetShrinksAfterBurst(t *testing.T) {
	var x requestIndex
	seed := maphash.MakeSeed()
	const burst = 100_000
	fs := make([]Future, burst)
	before := heapAfterGC()
	for i := range fs {
		x.add(seed, "peer:1", &fs[i])
	}
	for i := 1; i < burst; i++ {
		x.remove(seed, "peer:1", &fs[i])
	}
	grown := int64(heapAfterGC()) - int64(before)
	assert.Less(t, grown, int64(64<<10), "the set kept %d bytes after its burst", grown)
	set := x.take(seed, "peer:1")
	require.Len(t, set, 1)
	assert.Contains(t, set, &fs[0])
	runtime.KeepAlive(fs)
}

// TestRequestSetSteadyAllocatesNothing: a peer answered a few requests at
// a time (its set never holds shrinkFloor) costs no allocation per
// request, after its set's first.
func TestRequestSetSteadyAllocatesNothing(t *testing.T) {
	var x requestIndex
	seed := maphash.MakeSeed()
	var fs [shrinkFloor - 1]Future
	for i := range fs {
		x.add(seed, "peer:1", &fs[i])
	}
	for i := range fs {
		x.remove(seed, "peer:1", &fs[i])
	}
	allocs := leastAllocs(100, 0, func() {
		for i := range fs {
			x.add(seed, "peer:1", &fs[i])
		}
		for i := range fs {
			x.remove(seed, "peer:1", &fs[i])
		}
	})
	assert.Zero(t, allocs)
}

// BenchmarkRequestToPeer: a request to another node, answered: the
// request index's add and remove on the steady path of remote requests.
//
//	go test ./actor -run '^$' -bench RequestToPeer -benchmem
func BenchmarkRequestToPeer(b *testing.B) {
	sys := remoteTestSystem(b)
	pid := NewPID("peer:1", "a")
	b.ReportAllocs()
	for b.Loop() {
		f := sys.Root().RequestFuture(pid, "hello", 0)
		sys.send(nil, f.PID(), "answer", nil)
		if _, err := f.Result(); err != nil {
			b.Fatal(err)
		}
	}
}

// FailRequestsToBefore fails the requests to an address made before the
// mark and leaves the later ones pending and indexed, so that a later
// failure of the address still finds them; a kept one that completes
// leaves the index as any does.
func TestFailRequestsToBeforeMark(t *testing.T) {
	sys := remoteTestSystem(t)
	h := host{sys}
	gone := errors.New("old incarnation gone")
	const addr = "restarted:1"
	before := []*Future{
		sys.Root().RequestFuture(NewPID(addr, "a"), "m1", 0),
		sys.Root().RequestFuture(NewPID(addr, "a"), "m2", 0),
	}
	mark := h.RequestMark()
	after := []*Future{
		sys.Root().RequestFuture(NewPID(addr, "a"), "m3", 0),
		sys.Root().RequestFuture(NewPID(addr, "a"), "m4", 0),
	}
	require.Equal(t, 2, h.FailRequestsToBefore(addr, gone, mark))
	for _, f := range before {
		_, err := f.Result()
		require.ErrorIs(t, err, gone)
	}
	for _, f := range after {
		select {
		case <-f.Done():
			t.Fatal("a request made after the mark failed")
		default:
		}
	}
	require.Equal(t, 2, sys.registry.indexed(addr), "the later requests stay indexed")
	after[0].Complete("answer", nil)
	require.Equal(t, 1, sys.registry.indexed(addr))
	require.Equal(t, 1, h.FailRequestsTo(addr, gone))
	_, err := after[1].Result()
	require.ErrorIs(t, err, gone)
	require.Zero(t, sys.registry.indexed(addr))
}
