package testkit_test

import (
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/fraktor-go/fraktor/testkit"
)

// chaosFaults draws one fault per step from its PRNG. At least three
// members stay up; partitions and registry cuts heal on their own after a
// few steps (or earlier, by a heal step). A step that draws no fault from
// rng may draw one of the faults added since from later, a PRNG of its own
// (extra): the schedules of the seeds kept from before stay as they were.
type chaosFaults struct {
	tc      *testkit.TestCluster
	rng     *rand.Rand
	later   *rand.Rand
	beyondP bool
	counts  map[string]int
	parts   []chaosPart
	regCuts map[int]int // member → steps left
	// outage: the members a registry outage (extra) cut off, → steps
	// left; kept apart from regCuts, which rng's draws depend on.
	outage map[int]int
}

type chaosPart struct {
	from, to int
	oneWay   bool
	left     int
}

func newChaosFaults(tc *testkit.TestCluster, rng, later *rand.Rand, beyondP bool, counts map[string]int) *chaosFaults {
	return &chaosFaults{tc: tc, rng: rng, later: later, beyondP: beyondP, counts: counts, regCuts: map[int]int{},
		outage: map[int]int{}}
}

func (f *chaosFaults) pick(xs []int) int { return xs[f.rng.IntN(len(xs))] }

func (f *chaosFaults) down() []int {
	var out []int
	for i := range f.tc.Len() {
		if f.tc.State(i) != testkit.MemberUp {
			out = append(out, i)
		}
	}
	return out
}

func (f *chaosFaults) healPart(k int) {
	p := f.parts[k]
	f.parts = append(f.parts[:k], f.parts[k+1:]...)
	f.tc.Heal(p.from, p.to)
}

func (f *chaosFaults) step() {
	for k := len(f.parts) - 1; k >= 0; k-- {
		if f.parts[k].left--; f.parts[k].left <= 0 {
			f.healPart(k)
		}
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		for i, left := range cuts {
			if left <= 1 {
				delete(cuts, i)
				f.tc.HealRegistry(i)
			} else {
				cuts[i] = left - 1
			}
		}
	}
	up, down := f.tc.Up(), f.down()
	r := f.rng.IntN(100)
	switch {
	case r < 6 && len(up) > 3:
		i := f.pick(up)
		f.forget(i)
		f.tc.Kill(i)
		f.counts["kill"]++
	case r < 14 && len(down) > 0:
		i := f.pick(down)
		f.tc.Restart(i)
		f.counts["restart"]++
	case r < 17 && len(up) > 3:
		i := f.pick(up)
		f.forget(i)
		f.tc.Stop(i)
		f.counts["stop"]++
	case r < 19 && f.tc.Len() < chaosMaxSlots:
		f.tc.AddNode()
		f.counts["add"]++
	case r < 29 && len(up) > 1 && len(f.parts) < 3:
		i, j := f.two(up)
		f.tc.Partition(i, j)
		f.parts = append(f.parts, chaosPart{from: i, to: j, left: 1 + f.rng.IntN(15)})
		f.counts["partition"]++
	case r < 37 && len(up) > 1 && len(f.parts) < 3:
		i, j := f.two(up)
		f.tc.PartitionOneWay(i, j)
		f.parts = append(f.parts, chaosPart{from: i, to: j, oneWay: true, left: 1 + f.rng.IntN(15)})
		f.counts["partition-one-way"]++
	case r < 45 && len(f.regCuts) < 2:
		i := f.pick(up)
		if _, cut := f.regCuts[i]; !cut {
			f.tc.PartitionRegistry(i)
			f.regCuts[i] = 1 + f.rng.IntN(15)
			f.counts["partition-registry"]++
		}
	case r < 52 && len(f.parts) > 0:
		f.healPart(f.rng.IntN(len(f.parts)))
		f.counts["heal"]++
	case r < 55 && len(f.regCuts) > 0:
		// The lowest-numbered member cut off: a map's order made the
		// schedule of a seed differ from run to run.
		i := slices.Min(slices.Collect(maps.Keys(f.regCuts)))
		delete(f.regCuts, i)
		f.tc.HealRegistry(i)
		f.counts["heal-registry"]++
	case r < 65:
		f.tc.Pause(f.pick(up), time.Duration(10+f.rng.IntN(80))*time.Millisecond)
		f.counts["pause-within-P"]++
	case r < 70 && f.beyondP:
		f.tc.Pause(f.pick(up), time.Duration(300+f.rng.IntN(1200))*time.Millisecond)
		f.counts["pause-beyond-P"]++
	default:
		f.extra(up)
	}
}

// extra draws, from its own PRNG, the faults added after seeds were kept
// (so their schedules stay): on a step that drew no fault, a connection
// reset one time in three (Disconnect), a registry outage one time in 30
// (every running member cut off the registry for 1 to 15 steps, as when
// the registry's servers are all unreachable: every member fences, then
// all rejoin as new incarnations at once), else none.
func (f *chaosFaults) extra(up []int) {
	x := f.later.IntN(30)
	switch {
	case x < 10 && len(up) > 1:
		i := f.later.IntN(len(up))
		j := (i + 1 + f.later.IntN(len(up)-1)) % len(up)
		f.tc.Disconnect(up[i], up[j])
		f.counts["reset"]++
	case x == 10:
		left := 1 + f.later.IntN(15)
		for _, i := range up {
			_, cut := f.regCuts[i]
			if _, out := f.outage[i]; !cut && !out {
				f.tc.PartitionRegistry(i)
				f.outage[i] = left
			}
		}
		f.counts["registry-outage"]++
	default:
		f.counts["none"]++
	}
}

// two returns two distinct members of up.
func (f *chaosFaults) two(up []int) (int, int) {
	i := f.rng.IntN(len(up))
	j := (i + 1 + f.rng.IntN(len(up)-1)) % len(up)
	return up[i], up[j]
}

// forget drops the faults of a member that goes down (a restart starts
// clean).
func (f *chaosFaults) forget(i int) {
	for k := len(f.parts) - 1; k >= 0; k-- {
		if p := f.parts[k]; p.from == i || p.to == i {
			f.healPart(k)
		}
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		if _, ok := cuts[i]; ok {
			delete(cuts, i)
			f.tc.HealRegistry(i)
		}
	}
}

// healAll ends every fault: partitions, registry cuts and pauses.
func (f *chaosFaults) healAll() {
	for len(f.parts) > 0 {
		f.healPart(0)
	}
	for _, cuts := range []map[int]int{f.regCuts, f.outage} {
		for i := range cuts {
			delete(cuts, i)
			f.tc.HealRegistry(i)
		}
	}
	for _, i := range f.tc.Up() {
		f.tc.Resume(i)
	}
}
