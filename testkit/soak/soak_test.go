package soak_test

import (
	"flag"
	"os"
	"runtime/pprof"
	"testing"
	"time"
)

var (
	soakRounds = flag.Int("soak.rounds", 6, "TestSoak: rounds of churn (the early checkpoint comes after -soak.early of them)")
	soakEarly  = flag.Int("soak.early", 2, "TestSoak: rounds before the early checkpoint (warm-up)")
	soakIDs    = flag.Int("soak.ids", 150, "TestSoak: grain identities called per round (over the three members)")
	// soakHeapPerRound is off by default: a short run's heap is mostly
	// noise (GC timing, pools); the reachable stopped systems are the
	// precise check of what the heap figure found.
	soakHeapPerRound = flag.Int("soak.heapPerRound", 0, "TestSoak: fail when the live heap grows by more than this many bytes per round between the checkpoints (0: only report it)")
	soakReleased     = flag.Duration("soak.released", 0, "TestSoak: the registry's ReleasedRetention (0: its default, 10 min): a long run shorter than that keeps every released marker it made")
	soakProfile      = flag.String("soak.heapprofile", "", "TestSoak: write heap profiles of the running cluster at the checkpoints to this path with .early and .late appended (use with -test.memprofilerate=1)")
)

// goroutineSlack is the goroutines the late checkpoint may have beyond the
// early one: a connection's reader and writer that a heartbeat or the
// checkpoint's own pings just replaced.
const goroutineSlack = 6

// maxKept is how many stopped systems may still be reachable at a
// checkpoint: the one stopped last, whose last envelopes and futures a
// peer may not have let go of yet.
const maxKept = 1

// TestSoak runs the churn and fails when goroutines or a member's
// registries grow between the early checkpoint and the late one.
func TestSoak(t *testing.T) {
	rounds, early := *soakRounds, *soakEarly
	if early < 1 || rounds <= early {
		t.Fatalf("soak: need 1 ≤ -soak.early < -soak.rounds (have %d, %d)", early, rounds)
	}
	start := time.Now()
	h := newHarness(t)
	var first checkpoint
	for r := range rounds {
		h.round(r, *soakIDs)
		if t.Failed() {
			t.FailNow()
		}
		if r+1 == early {
			first = h.checkpoint(r + 1)
			writeHeapProfile(t, ".early")
			t.Logf("%v (%v)", first, time.Since(start).Round(time.Millisecond))
		}
	}
	last := h.checkpoint(rounds)
	writeHeapProfile(t, ".late")
	t.Logf("%v (%v)", last, time.Since(start).Round(time.Millisecond))
	s := h.stats
	t.Logf("churn: %d rounds, %d requests (%d failed), %d sends, %d timed out, %d futures abandoned, "+
		"%d actors spawned, %d Terminated, %d dead letters sent, %d connection ends reset, %d restarts, %d new member IDs, %d crashes, %d fenced and rejoined",
		rounds, s.requests, s.requestFailures, s.sends, s.timeouts, s.abandoned,
		s.spawned, s.terminated, s.deadLettersSent, s.resets, s.restarts, s.newIDs, s.crashes, s.fences)

	between := rounds - early
	for _, g := range growth(first.byCreator, last.byCreator) {
		t.Logf("goroutines: %s", g)
	}
	if last.goroutines > first.goroutines+goroutineSlack {
		t.Errorf("soak: goroutines grew from %d to %d over %d rounds", first.goroutines, last.goroutines, between)
	}
	heapPerRound := (int64(last.heapLive) - int64(first.heapLive)) / int64(between)
	t.Logf("live heap: %+d bytes per round", heapPerRound)
	if *soakHeapPerRound > 0 && heapPerRound > int64(*soakHeapPerRound) {
		t.Errorf("soak: live heap grew by %d bytes per round (more than %d)", heapPerRound, *soakHeapPerRound)
	}
	// A stopped incarnation's system must become garbage: what the live
	// members keep of a peer is bounded, and none of it is the peer's
	// objects (they share a process here only).
	if last.kept > first.kept || last.kept > maxKept {
		t.Errorf("soak: %d of %d stopped systems still reachable (%d of %d at the early checkpoint)", last.kept, last.shut, first.kept, first.shut)
	}
	// Every member holds, once quiet, the same registries whatever the
	// churn before: its actors (guardians, system actors, echo, sink), one
	// endpoint per live peer.
	for i, g := range last.members {
		f := first.members[i]
		if g.processes > f.processes+2 {
			t.Errorf("soak: member slot %d's processes grew from %d to %d", i, f.processes, g.processes)
		}
		if g.endpoints > len(h.members)-1 {
			t.Errorf("soak: member %s has %d remote endpoints for %d live peers", g.id, g.endpoints, len(h.members)-1)
		}
	}
}

// writeHeapProfile writes the heap profile of the running cluster when
// -soak.heapprofile is set: compare the two with
// go tool pprof -sample_index=inuse_space -diff_base=P.early -top P.late.
func writeHeapProfile(t *testing.T, suffix string) {
	if *soakProfile == "" {
		return
	}
	f, err := os.Create(*soakProfile + suffix)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		t.Fatal(err)
	}
}
