package actor

import (
	"context"
	"strings"
	"testing"
	"unsafe"
)

// One cell exists per actor: it stays within the 416-byte size class (a
// size the allocator serves without a malloc header), which with no user
// queue ring held while idle keeps an idle actor under 500 bytes.
func TestCellSize(t *testing.T) {
	if n := unsafe.Sizeof(cell{}); n > 416 {
		t.Fatalf("cell is %d bytes, more than 416", n)
	}
}

// Props without options are one 32-byte allocation (options sit apart, in
// propsOptions): actors that make Props per spawn pay that per child.
func TestPropsSize(t *testing.T) {
	if n := unsafe.Sizeof(Props{}); n > 32 {
		t.Fatalf("Props is %d bytes, more than 32", n)
	}
	if p := PropsFromFunc(func(Context) {}); p.opt != nil {
		t.Fatal("Props without options allocated options")
	}
	p := PropsFromFunc(func(Context) {}, WithKind("k"), WithBlocking())
	if o := p.o(); o.kind != "k" || !o.blocking || noOptions.kind != "" || noOptions.blocking {
		t.Fatalf("options not kept apart: %+v, shared %+v", *o, noOptions)
	}
}

// An ID built by the spawn (generated, or nested) lives in the cell's own
// allocation when it fits cellID; a longer one is allocated. Either reads
// back as built and resolves.
func TestCellIDInline(t *testing.T) {
	sys := newTestSystem(t)
	root := sys.Root()
	inCell := func(pid *PID) bool {
		c := pid.local.Load()
		p := uintptr(unsafe.Pointer(unsafe.StringData(pid.ID)))
		start := uintptr(unsafe.Pointer(c))
		return p >= start && p < start+unsafe.Sizeof(*c)
	}
	short := root.Spawn(PropsFromFunc(func(Context) {}))
	long := root.SpawnPrefix(PropsFromFunc(func(Context) {}), "a-prefix-longer-than-the-buffer")
	named, err := root.SpawnNamed(PropsFromFunc(func(Context) {}), "given")
	if err != nil {
		t.Fatal(err)
	}
	if !inCell(short) {
		t.Fatalf("short ID %q is not in its cell", short.ID)
	}
	if inCell(long) || !strings.HasPrefix(long.ID, "a-prefix-longer-than-the-buffer$") {
		t.Fatalf("long ID %q", long.ID)
	}
	if named.ID != "given" {
		t.Fatalf("named ID %q", named.ID)
	}
	for _, pid := range []*PID{short, long, named} {
		if p, ok := sys.registry.get(strings.Clone(pid.ID)); !ok || p != pid.local.Load() {
			t.Fatalf("%q does not resolve", pid.ID)
		}
	}
}

// A future carries its ID and its timeout's heap node in its own allocation
// (futureID, timerNode): a future costs the Future (224-byte size class) and
// its done channel, nothing more, and its ID reads
// "future$<base 64 sequence><11-digit random tag>".
func TestFutureIDInline(t *testing.T) {
	if n := unsafe.Sizeof(Future{}); n > 224 {
		t.Fatalf("Future is %d bytes, more than 224", n)
	}
	sys, err := NewSystem(SystemConfig{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sys.Shutdown(context.Background()) }()
	f := sys.newFuture(nil, 0)
	if seq, ok := seqOfFutureID(f.PID().ID); !ok || seq != sys.futureSeq.Load() || len(f.PID().ID) > len(f.idbuf) {
		t.Fatalf("future ID %q: sequence %d, %v, want %d", f.PID().ID, seq, ok, sys.futureSeq.Load())
	}
	allocs := leastAllocs(1000, 2, func() { sys.newFuture(nil, 0).Complete(nil, nil) })
	if allocs > 2 {
		t.Fatalf("a future costs %.0f allocations, want 2 (the Future and its done channel)", allocs)
	}
	var b futureID
	if got := b.format(1<<64-1, 0); got != "future$f__________00000000000" {
		t.Fatalf("long ID %q", got)
	}
	if seq, ok := seqOfFutureID(b.format(1<<64-1, 1<<64-1)); !ok || seq != 1<<64-1 {
		t.Fatalf("long ID's sequence %d, %v", seq, ok)
	}
	if !IsFutureID(f.PID().ID) || !IsFutureID(sys.Root().StopFuture(f.PID()).PID().ID) {
		t.Fatal("IsFutureID does not know a future's ID")
	}
	if pid := sys.Root().Spawn(PropsFromFunc(func(Context) {})); IsFutureID(pid.ID) {
		t.Fatalf("IsFutureID(%q), an actor's", pid.ID)
	}
}

// StopFuture on a local actor is one system message carried in the
// future's allocation (stop_future.go), a generated ID lives in the cell
// (cell_id.go), and with the pool idle the whole life runs on the caller
// (future_deferred.go), so the future completes before Wait would wait and
// makes no channel: a synchronous life (spawn, StopFuture, Wait) costs the
// cell and the future with the message. With Watch + Stop and the ID apart
// it cost eight; with the life on the pool, three.
func TestStopFutureAllocs(t *testing.T) {
	sys := newCallerTurnSystem(t, 2) // workers parked: AllocsPerRun runs on one P
	props := PropsFromFunc(func(Context) {})
	root := sys.Root()
	allocs := leastAllocs(2000, 2, func() {
		if err := root.StopFuture(root.Spawn(props)).Wait(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 2 {
		t.Fatalf("spawn + StopFuture + Wait costs %.1f allocations, want at most 2", allocs)
	}
}

// PropsFromFunc keeps the function in the Props (Props.newActor): one
// allocation, and Spawn with Props made for it (a kind cached without a
// wrapper: kindMetrics.owner) adds none to a life's two (TestStopFutureAllocs).
// With a producer closure and a per-Props kind wrapper it cost seven.
func TestPropsFromFuncAllocs(t *testing.T) {
	n := 0
	f := func(Context) { n++ } // a closure: the old producer had to capture it
	if allocs := leastAllocs(1000, 1, func() { _ = PropsFromFunc(f) }); allocs != 1 {
		t.Fatalf("PropsFromFunc costs %.0f allocations, want 1 (the Props)", allocs)
	}
	sys := newCallerTurnSystem(t, 2)
	root := sys.Root()
	allocs := leastAllocs(2000, 3, func() {
		if err := root.StopFuture(root.Spawn(PropsFromFunc(f))).Wait(); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 3 {
		t.Fatalf("a life with fresh Props costs %.1f allocations, want at most 3", allocs)
	}
}

// A parent's first childInline children share the set's allocation
// (newChildSet); the ninth grows the list once.
func TestChildSetInline(t *testing.T) {
	kids := make([]*cell, childInline+1)
	for i := range kids {
		kids[i] = &cell{childSlot: -1}
	}
	allocs := testing.AllocsPerRun(100, func() {
		s := newChildSet()
		for _, ch := range kids[:childInline] {
			s.add(ch)
		}
		for _, ch := range kids[:childInline] {
			if !s.remove(ch) {
				t.Fatal("child not found")
			}
		}
	})
	if allocs != 1 {
		t.Fatalf("a set of %d children costs %.0f allocations, want 1", childInline, allocs)
	}
	s := newChildSet()
	for _, ch := range kids {
		s.add(ch)
	}
	if s.live != len(kids) || !s.contains(kids[childInline]) {
		t.Fatalf("set past the inline slots: live %d", s.live)
	}
}

// Two systems, as two incarnations of one node at one address would be,
// number their futures apart (futureSeqBase): a late answer to the first
// one's future cannot complete the second one's.
func TestFutureNumbersDifferAcrossSystems(t *testing.T) {
	first := func() string {
		sys, err := NewSystem(SystemConfig{})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = sys.Shutdown(context.Background()) }()
		f := sys.newFuture(nil, 0)
		defer f.Complete(nil, nil)
		return f.PID().ID
	}
	if a, b := first(), first(); a == b {
		t.Fatalf("both systems' first future is %s", a)
	}
}
