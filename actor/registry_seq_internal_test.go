package actor

import (
	"context"
	"errors"
	"strconv"
	"testing"
)

func newTestSystem(t *testing.T) *System {
	t.Helper()
	sys, err := NewSystem(SystemConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sys.Shutdown(context.Background()) })
	return sys
}

// namedLen counts the entries of the map of named IDs.
func (r *registry) namedLen() int {
	n := 0
	for i := range r.shards {
		s := &r.shards[i]
		s.mu.RLock()
		n += len(s.m)
		s.mu.RUnlock()
	}
	return n
}

// seqPages counts the pages of generated IDs in the directory.
func (t *seqTable) pages() int {
	n := 0
	for i := range t.shards {
		sh := &t.shards[i]
		sh.mu.RLock()
		n += len(sh.m)
		sh.mu.RUnlock()
	}
	return n
}

// Actors with generated IDs, top-level and nested, live in the sequence
// table (registry_seq.go), not in the map of named IDs; they resolve by ID,
// count in ProcessCount, and their pages leave once every actor of the page
// has stopped.
func TestRegistrySeqTable(t *testing.T) {
	sys := newTestSystem(t)
	root := sys.Root()
	named := sys.registry.namedLen() // the guardians
	const n = 3*seqPageSize + 5
	ready := make(chan *PID, 1)
	parent := root.Spawn(PropsFromFunc(func(c Context) {
		if _, ok := c.Message().(*Started); ok {
			ready <- c.SpawnPrefix(PropsFromFunc(func(Context) {}), "kid")
		}
	}))
	nested := <-ready
	pids := []*PID{parent, nested}
	for range n {
		pids = append(pids, root.Spawn(PropsFromFunc(func(Context) {})))
	}
	if got := sys.registry.namedLen(); got != named {
		t.Fatalf("%d named entries after spawning generated IDs, want %d (the guardians)", got, named)
	}
	if got := sys.ProcessCount(); got != named+len(pids) {
		t.Fatalf("ProcessCount %d, want %d", got, named+len(pids))
	}
	for _, pid := range pids {
		p, ok := sys.registry.get(pid.ID)
		if !ok || p != pid.local.Load() {
			t.Fatalf("%s does not resolve to its actor", pid.ID)
		}
		// A PID rebuilt from the ID (the wire, NewPID) resolves too.
		if got := sys.resolve(NewPID(pid.Address, pid.ID)); got != p {
			t.Fatalf("rebuilt %s resolves to %v", pid.ID, got)
		}
	}
	if nested.ID[0] != '#' {
		t.Fatalf("nested ID %q", nested.ID)
	}
	for _, pid := range pids[2:] {
		if err := root.StopFuture(pid).Wait(); err != nil {
			t.Fatal(err)
		}
		if _, ok := sys.registry.get(pid.ID); ok {
			t.Fatalf("%s resolves after its stop", pid.ID)
		}
	}
	// The pages of the stopped actors left: what is left holds the parent
	// and its child (one page, or two when they straddle a boundary of the
	// random base's pages), and the page being filled unless its last
	// number was handed out.
	want := map[uint64]bool{}
	for _, pid := range pids[:2] {
		seq, _ := seqOf(pid.ID)
		want[seq>>seqPageBits] = true
	}
	if last := sys.idSeq.Load(); last&(seqPageSize-1) != seqPageSize-1 {
		want[last>>seqPageBits] = true
	}
	if got := sys.registry.seq.pages(); got != len(want) {
		t.Fatalf("%d pages left after the actors stopped, want %d", got, len(want))
	}
	if got := sys.ProcessCount(); got != named+2 {
		t.Fatalf("ProcessCount %d after the stops, want %d", got, named+2)
	}
}

// A name of the generated form shares the ID space: it cannot take the ID
// of a live generated actor, a generated actor cannot take it back, and
// an ID that ends like a generated one (a name, a future's ID) resolves to
// its own process, not to the actor in the slot of that number.
func TestRegistryNamedSeqForm(t *testing.T) {
	sys := newTestSystem(t)
	root := sys.Root()
	props := PropsFromFunc(func(Context) {})
	live := root.Spawn(props)
	if _, err := root.SpawnNamed(props, live.ID); !errors.Is(err, ErrNameExists) {
		t.Fatalf("SpawnNamed(%q) over a live generated actor: %v", live.ID, err)
	}
	// The next generated ID, taken first by a name: the generated spawn
	// must not register the same ID a second time; it skips to the next
	// (TestGeneratedIDSkipsATakenName).
	next := "$" + strconv.FormatUint(sys.idSeq.Load()+1, 36)
	squatter, err := root.SpawnNamed(props, next)
	if err != nil {
		t.Fatal(err)
	}
	if gen, err := sys.spawnFromRoot(props, "", ""); err != nil || gen.ID == next {
		t.Fatalf("a generated spawn over the name %q: %v, %v", next, gen, err)
	}
	if p, _ := sys.registry.get(next); p != squatter.local.Load() {
		t.Fatalf("%q resolves to %v, want the named actor", next, p)
	}
	// Same number, other prefix: each resolves to its own.
	seq, _ := seqOf(live.ID)
	alias := "x$" + strconv.FormatUint(seq, 36)
	other, err := root.SpawnNamed(props, alias)
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := sys.registry.get(alias); p != other.local.Load() {
		t.Fatalf("%q resolves to %v, want the named actor", alias, p)
	}
	if p, _ := sys.registry.get(live.ID); p != live.local.Load() {
		t.Fatalf("%q resolves to %v, want the generated actor", live.ID, p)
	}
	// Removing one leaves the other.
	if err := root.StopFuture(other).Wait(); err != nil {
		t.Fatal(err)
	}
	if p, _ := sys.registry.get(live.ID); p != live.local.Load() {
		t.Fatalf("%q lost after %q stopped", live.ID, alias)
	}
	if err := root.StopFuture(live).Wait(); err != nil {
		t.Fatal(err)
	}
	if _, ok := sys.registry.get(live.ID); ok {
		t.Fatalf("%q resolves after its stop", live.ID)
	}
}

// With futures registered (remote installed), a future's ID
// ("future$<seq>", numbered apart from actors) resolves to the future even
// while an actor holds the slot of the same number, so an answer from the
// wire still completes it.
func TestRegistryFutureIDs(t *testing.T) {
	sys := newTestSystem(t)
	sys.registerFutures.Store(true)
	root := sys.Root()
	props := PropsFromFunc(func(Context) {})
	var actors []*PID
	for range 8 {
		actors = append(actors, root.Spawn(props))
	}
	for range 8 {
		f := sys.newFuture(nil, 0)
		p, ok := host{s: sys}.Lookup(f.PID().ID)
		if !ok || p != Process(f) {
			t.Fatalf("future %s resolves to %v", f.PID().ID, p)
		}
		// An answer addressed by a PID rebuilt from the ID completes it.
		sys.send(nil, NewPID(f.PID().Address, f.PID().ID), "answer", nil)
		if v, err := f.Result(); err != nil || v != "answer" {
			t.Fatalf("future answered %v, %v", v, err)
		}
		if _, ok := sys.registry.get(f.PID().ID); ok {
			t.Fatalf("completed future %s still resolves", f.PID().ID)
		}
	}
	// Generated actors spawned after futures took named IDs of the
	// generated form still register and resolve.
	pid := root.Spawn(props)
	if p, _ := sys.registry.get(pid.ID); p != pid.local.Load() {
		t.Fatalf("%s resolves to %v", pid.ID, p)
	}
	for _, a := range append(actors, pid) {
		if p, _ := sys.registry.get(a.ID); p != a.local.Load() {
			t.Fatalf("%s resolves to %v", a.ID, p)
		}
	}
}

func TestSeqOf(t *testing.T) {
	for _, tc := range []struct {
		id  string
		seq uint64
		ok  bool
	}{
		{"$1", 1, true},
		{"$z", 35, true},
		{"$10", 36, true},
		{"#3/worker$a", 10, true},
		{"future$" + strconv.FormatUint(1<<64-1, 36), 1<<64 - 1, true},
		{"$" + strconv.FormatUint(1<<64-1, 36) + "0", 0, false},     // overflows
		{"$zzzzzzzzzzzzz", 0, false},                                // overflows
		{"$01", 0, false},                                           // not how it is written
		{"$" + strconv.FormatUint(1<<40-1, 36), 1<<40 - 1, true},    // the largest random base (idSeqBase)
		{"#zzzzz/$" + strconv.FormatUint(1<<41, 36), 1 << 41, true}, // nested, past it
		{"$A", 0, false},
		{"$", 0, false},
		{"name", 0, false},
		{"", 0, false},
		{"$1/x", 0, false},
		{"$-1", 0, false},
	} {
		seq, ok := seqOf(tc.id)
		if ok != tc.ok || seq != tc.seq {
			t.Errorf("seqOf(%q) = %d, %v; want %d, %v", tc.id, seq, ok, tc.seq, tc.ok)
		}
	}
}

// A page whose place in the cache a newer page took is still found through
// the map; a finished page leaves both.
func TestSeqTablePages(t *testing.T) {
	var tb seqTable
	tb.init(0)
	a, b := &cell{}, &cell{}
	old := uint64(seqPageSize + 5)       // page 1: page 0 starts with 0 done (never handed out)
	newer := old + seqRecent*seqPageSize // the same cache place
	tb.store(old, a)
	tb.store(newer, b)
	if tb.recent[(old>>seqPageBits)%seqRecent].Load().num != newer>>seqPageBits {
		t.Fatal("the newer page did not take the cache place")
	}
	if tb.load(old) != a || tb.load(newer) != b {
		t.Fatal("lookups failed")
	}
	// remove takes only the actor that holds the slot.
	if tb.remove(old, b) || !tb.remove(old, a) || tb.load(old) != nil {
		t.Fatal("remove took the wrong actor, or not the right one")
	}
	// Finish every other number of the old page: it leaves the map.
	for i := range uint64(seqPageSize) {
		if seq := old&^(seqPageSize-1) + i; seq != old {
			tb.finish(seq)
		}
	}
	if tb.load(old) != nil || tb.pages() != 1 {
		t.Fatalf("finished page still there: %d pages", tb.pages())
	}
	for i := range uint64(seqPageSize) {
		tb.finish(newer&^(seqPageSize-1) + i)
	}
	if tb.load(newer) != nil || tb.pages() != 0 || tb.recent[(newer>>seqPageBits)%seqRecent].Load() != nil {
		t.Fatal("finished page still cached")
	}
}

// Numbers up to the table's base are never handed out: the first page
// counts them finished with, so it leaves like any other once its handed
// numbers are. Without that a system starting at a random base would keep
// its first page forever.
func TestSeqTableRandomBaseFirstPageLeaves(t *testing.T) {
	for _, base := range []uint64{0, 1, 40, seqPageSize - 1, seqPageSize, 5*seqPageSize + 77, 1<<40 - 1, idSeqBase()} {
		var tb seqTable
		tb.init(base)
		c := &cell{}
		end := (base/seqPageSize + 3) * seqPageSize // through the end of the third page after the base's
		for seq := base + 1; seq < end; seq++ {
			tb.store(seq, c)
		}
		if tb.load(base+1) != c || tb.load(end-1) != c {
			t.Fatalf("base %d: lookups failed", base)
		}
		for seq := base + 1; seq < end; seq++ {
			if !tb.remove(seq, c) {
				t.Fatalf("base %d: remove(%d) failed", base, seq)
			}
		}
		if n := tb.pages(); n != 0 {
			t.Fatalf("base %d: %d pages left after every handed-out number finished", base, n)
		}
	}
}

// A stop a million spawns after its own still finds its page in the
// lock-free cache (seqRecent), not through the shard's lock and map: the
// pages made for the spawns in between did not take its cache place.
func TestSeqTableCacheCoversBurst(t *testing.T) {
	var tb seqTable
	tb.init(0)
	a, b := &cell{}, &cell{}
	first := uint64(seqPageSize) // page 1: page 0 starts with 0 done
	tb.store(first, a)
	const burst = 1_000_000
	for seq := first + seqPageSize; seq < first+burst; seq += seqPageSize {
		tb.store(seq, b) // one number per page: every page of the burst is made
	}
	p := tb.recent[(first>>seqPageBits)%seqRecent].Load()
	if p == nil || p.num != first>>seqPageBits {
		t.Fatalf("the page of a number %d spawns old left the cache", burst)
	}
	if !tb.remove(first, a) {
		t.Fatal("remove failed")
	}
}
